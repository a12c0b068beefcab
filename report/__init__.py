"""The report people read: the HTML page (`html`, with `overview`, `sections`, `charts`, `items`
and `svg`) and the text report (`text`), both formatting stored numbers with their stored labels
(`base`). Pure: frames and `now` in, a string out; storage/report.py reads the frames."""
