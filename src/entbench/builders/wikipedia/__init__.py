"""The Wikipedia XML dump scan and title -> QID resolution (spec §3)."""
