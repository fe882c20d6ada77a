-- The key trail: the same table as migrations/sqlite/006-key-events.sql. One row per change of a
-- key (create, revoke, rotate) and one for the moment a key stops working by its expiry
-- (expires), written in the transaction of the change that sets it. An expires row is dated when
-- the key stops working, so until then it is dated in the future; a revocation before that
-- moment removes it, as that expiry will not happen. A row copies what names the key (id,
-- prefix, name, scope) so that it reads alone, and holds neither the key nor its hash. actor and
-- host say who made the change and where, as the command told.
CREATE TABLE key_events (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at TIMESTAMPTZ NOT NULL,
  change TEXT NOT NULL CHECK (change IN ('create', 'revoke', 'rotate', 'expires')),
  key_id BIGINT NOT NULL,
  key_prefix TEXT NOT NULL,
  key_name TEXT NOT NULL,
  scope TEXT NOT NULL,
  related_key_id BIGINT,
  actor TEXT NOT NULL,
  host TEXT NOT NULL
);

-- keys log --since reads from a time on; keys log --key reads one key's rows.
CREATE INDEX key_events_at ON key_events (at);
CREATE INDEX key_events_key_id ON key_events (key_id);

-- The keys issued before the trail: what api_keys knows of them, by an actor not recorded.
INSERT INTO key_events (at, change, key_id, key_prefix, key_name, scope, related_key_id, actor, host)
SELECT at, change, key_id, key_prefix, key_name, scope, related_key_id, '(not recorded)', '(not recorded)' FROM (
  SELECT created_at AS at, 'create' AS change, id AS key_id, prefix AS key_prefix, name AS key_name, scope, rotated_from AS related_key_id, 1 AS step FROM api_keys
  UNION ALL
  SELECT revoked_at, 'revoke', id, prefix, name, scope, NULL, 2 FROM api_keys WHERE revoked_at IS NOT NULL
  UNION ALL
  SELECT expires_at, 'expires', id, prefix, name, scope, NULL, 3 FROM api_keys
  WHERE expires_at IS NOT NULL AND (revoked_at IS NULL OR revoked_at > expires_at)
) AS known ORDER BY at, key_id, step;
