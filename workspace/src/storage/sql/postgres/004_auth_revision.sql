-- One counter every server reads on each authenticated request: any write to a table that
-- decides what a caller may do bumps it in the same transaction (these triggers, so no
-- code path, CLI or hand-run SQL can forget), and a server trusts its in-process copies of
-- keys and connections only while the counter is unchanged.
CREATE TABLE auth_revision (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value BIGINT NOT NULL
);
INSERT INTO auth_revision (id, value) VALUES (1, 0);
CREATE FUNCTION bump_auth_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE auth_revision SET value = value + 1 WHERE id = 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER api_keys_auth_revision AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_revision();
CREATE TRIGGER connections_auth_revision AFTER INSERT OR UPDATE OR DELETE ON connections
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_revision();
CREATE TRIGGER members_auth_revision AFTER INSERT OR UPDATE OR DELETE ON members
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_revision();
CREATE TRIGGER organizations_auth_revision AFTER INSERT OR UPDATE OR DELETE ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_revision();
