-- A counter bumped by every change that can end or move a key's validity, by any connection or
-- process (the CLI, another instance). Key caches read it when SQLite says that another
-- connection committed, so the pet writer's commits, which never touch a key, do not empty them.
-- last_used_at is left out on purpose: it is bookkeeping, not validity.
CREATE TABLE api_key_changes (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
);
INSERT INTO api_key_changes (id, version) VALUES (1, 0);

CREATE TRIGGER api_keys_changed_by_insert AFTER INSERT ON api_keys
BEGIN UPDATE api_key_changes SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_changed_by_update AFTER UPDATE OF hash, revoked_at, expires_at ON api_keys
BEGIN UPDATE api_key_changes SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_changed_by_delete AFTER DELETE ON api_keys
BEGIN UPDATE api_key_changes SET version = version + 1 WHERE id = 1; END;
