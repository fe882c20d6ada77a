-- A key is read (list and get animals) or write (also add them). Keys issued before scopes
-- could do everything, and keep doing so: the default makes every existing row write.
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'write' CHECK (scope IN ('read', 'write'));
