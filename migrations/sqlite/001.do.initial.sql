-- AUTOINCREMENT: ids are never reused, even after the highest row is gone.
CREATE TABLE pets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  category_id INTEGER NOT NULL,
  status TEXT CHECK (status IN ('available', 'pending', 'sold'))
);

-- listPets filtered by status walks this index in id order: a range scan, never a sort.
CREATE INDEX pets_status_id ON pets (status, id);

CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT,
  expires_at TEXT
);
