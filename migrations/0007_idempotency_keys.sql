-- Idempotency-Key on every POST that creates (draft-ietf-httpapi-idempotency-key-header).
--
-- Only adds: the Worker before this migration never reads the table.

-- One row per account and key. `fingerprint` is the SHA-256 of method, path and body
-- (`domain::site::idempotency::fingerprint`): the same key with another fingerprint is refused (422).
-- `state` is `running` while the first request runs (a second one meanwhile is 409; a request that
-- died is taken over once `claimed_s` is `domain::site::idempotency::IN_FLIGHT_S` old) and `done` with the
-- first answer's status, Location, ETag and body, which a retry gets again. A failed request deletes
-- its row, so it can be sent again. Each new key deletes the keys past `expires_s` (24 hours after
-- their first use).
CREATE TABLE idempotency_keys (
  account_id  INTEGER NOT NULL,
  key         TEXT    NOT NULL,
  fingerprint TEXT    NOT NULL,
  state       TEXT    NOT NULL CHECK (state IN ('running', 'done')),
  claimed_s   INTEGER NOT NULL,
  expires_s   INTEGER NOT NULL,
  status      INTEGER,
  location    TEXT,
  etag        TEXT,
  body        TEXT,
  PRIMARY KEY (account_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_s);
