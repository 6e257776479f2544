-- The OAuth subject (the access token's `sub`) a member signs in as; one member per subject.
ALTER TABLE members ADD COLUMN oauth_subject TEXT;
CREATE UNIQUE INDEX members_oauth_subject ON members (oauth_subject);
