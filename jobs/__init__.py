"""The application's jobs: plain functions that read through `storage`, compute in `analysis`,
decide and deliver in `alerts`, and write through `storage`.

Prefect (`flows/`) and the command line (`cli/`) both call these; neither holds logic of its own.
"""
