-- The same tables as migrations/sqlite/001-initial.sql. An identity is a sequence: ids are
-- never reused, and each instance draws its own without coordination.
CREATE TABLE pets (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name TEXT NOT NULL,
  category_id BIGINT NOT NULL,
  status TEXT CHECK (status IN ('available', 'pending', 'sold'))
);

-- listPets filtered by status walks this index in id order: a range scan, never a sort.
CREATE INDEX pets_status_id ON pets (status, id);

CREATE TABLE api_keys (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at TIMESTAMPTZ NOT NULL,
  last_used_at TIMESTAMPTZ,
  revoked_at TIMESTAMPTZ,
  expires_at TIMESTAMPTZ
);
