COMMENT ON TABLE blobs IS 'raw bytes of every distinct response, zlib-compressed, keyed by SHA-256 of the raw bytes';
COMMENT ON COLUMN blobs.sha256 IS 'SHA-256 of the raw bytes';
COMMENT ON COLUMN blobs.size IS 'size of the raw bytes';
COMMENT ON COLUMN blobs.compression IS 'zlib';
COMMENT ON COLUMN blobs.content IS 'the compressed bytes';
COMMENT ON COLUMN blobs.first_seen IS 'when they were first stored';
