"""Telling the merchant: events (payment completed, review, phone offline, …) sent by e-mail,
Telegram or the app.
"""
