-- One row per (API key, Idempotency-Key): the primary key makes a second pet for the same key
-- impossible, also between instances; a concurrent request with the same key waits on it for
-- the first transaction. Written in the same transaction as the pet it points to.
CREATE TABLE idempotency_records (
  api_key_id BIGINT NOT NULL REFERENCES api_keys (id),
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  pet_id BIGINT NOT NULL REFERENCES pets (id),
  created_at TIMESTAMPTZ NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (api_key_id, idempotency_key)
);

-- The hourly purge deletes by expiry.
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
