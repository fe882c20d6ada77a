-- One row per (API key, Idempotency-Key): the primary key is what makes a second pet for the
-- same key impossible. Written in the same transaction as the pet it points to.
CREATE TABLE idempotency_records (
  api_key_id INTEGER NOT NULL REFERENCES api_keys (id),
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  pet_id INTEGER NOT NULL REFERENCES pets (id),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (api_key_id, idempotency_key)
) WITHOUT ROWID;

-- The hourly purge deletes by expiry.
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
