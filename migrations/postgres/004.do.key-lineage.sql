-- keys rotate links the key it issues to the key it replaces (rotated_from), and every key of
-- a rotation chain shares one lineage: the id of the chain's first key. Idempotency records
-- are kept per lineage (idempotency_records.api_key_id holds the lineage id), so a retry sent
-- with the successor finds what its predecessor created. lineage_id NULL: the key starts its
-- own lineage, its id. Every key issued before this migration does, so the records it holds
-- stay its own; keys rotated before it stay unlinked, as that rotation was never recorded.
ALTER TABLE api_keys ADD COLUMN rotated_from BIGINT REFERENCES api_keys (id);
ALTER TABLE api_keys ADD COLUMN lineage_id BIGINT REFERENCES api_keys (id);

-- keys rotate looks a key's successors up before it issues another.
CREATE INDEX api_keys_rotated_from ON api_keys (rotated_from);
