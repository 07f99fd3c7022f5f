"""Reports: CSV exports of a brand's payments and refunds for a date range, streamed row by row."""
