-- One counter every server reads on each authenticated request: any write to a table that
-- decides what a caller may do bumps it in the same transaction (these triggers, so no
-- code path, CLI or hand-run SQL can forget), and a server trusts its in-process copies of
-- keys and connections only while the counter is unchanged.
CREATE TABLE auth_revision (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value BIGINT NOT NULL
);
INSERT INTO auth_revision (id, value) VALUES (1, 0);
CREATE TRIGGER api_keys_insert_auth_revision AFTER INSERT ON api_keys
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_update_auth_revision AFTER UPDATE ON api_keys
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_delete_auth_revision AFTER DELETE ON api_keys
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER connections_insert_auth_revision AFTER INSERT ON connections
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER connections_update_auth_revision AFTER UPDATE ON connections
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER connections_delete_auth_revision AFTER DELETE ON connections
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER members_insert_auth_revision AFTER INSERT ON members
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER members_update_auth_revision AFTER UPDATE ON members
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER members_delete_auth_revision AFTER DELETE ON members
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER organizations_insert_auth_revision AFTER INSERT ON organizations
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER organizations_update_auth_revision AFTER UPDATE ON organizations
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER organizations_delete_auth_revision AFTER DELETE ON organizations
BEGIN UPDATE auth_revision SET value = value + 1 WHERE id = 1; END;
