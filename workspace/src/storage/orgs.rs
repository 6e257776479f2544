//! Organizations (immutable slug) and their members.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreResult};
use crate::clock::now_ms;

/// An organization; its slug never changes.
#[derive(Clone, Debug)]
pub struct Organization {
    /// Internal id.
    pub id: String,
    /// The immutable slug used in URLs (`:org`).
    pub slug: String,
    /// Display name.
    pub name: String,
}

/// A member of an organization; API keys act on behalf of one.
#[derive(Clone, Debug)]
pub struct Member {
    /// Internal id.
    pub id: String,
    /// The organization.
    pub org_id: String,
    /// Display name.
    pub name: String,
    /// Role (`owner` for the member created by `workspace init`).
    pub role: String,
    /// The OAuth subject (an access token's `sub`) this member signs in as, if any.
    pub oauth_subject: Option<String>,
}

fn org_from(row: &AnyRow) -> StoreResult<Organization> {
    Ok(Organization {
        id: row.try_get("id")?,
        slug: row.try_get("slug")?,
        name: row.try_get("name")?,
    })
}

impl Store {
    /// Creates an organization and its owner member (signing in as `oauth_subject`, if
    /// given) in one transaction.
    pub async fn create_org_with_owner(
        &self,
        slug: &str,
        oauth_subject: Option<&str>,
    ) -> StoreResult<(Organization, Member)> {
        let now = now_ms();
        let org = Organization {
            id: uuid::Uuid::new_v4().to_string(),
            slug: slug.to_string(),
            name: slug.to_string(),
        };
        let owner = Member {
            id: uuid::Uuid::new_v4().to_string(),
            org_id: org.id.clone(),
            name: "owner".into(),
            role: "owner".into(),
            oauth_subject: oauth_subject.map(str::to_string),
        };
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO organizations (id, slug, name, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(&org.id)
        .bind(&org.slug)
        .bind(&org.name)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO members (id, org_id, name, role, oauth_subject, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&owner.id)
        .bind(&owner.org_id)
        .bind(&owner.name)
        .bind(&owner.role)
        .bind(&owner.oauth_subject)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((org, owner))
    }

    /// The organization with this slug.
    pub async fn org_by_slug(&self, slug: &str) -> StoreResult<Option<Organization>> {
        sqlx::query("SELECT id, slug, name FROM organizations WHERE slug = $1")
            .bind(slug)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(org_from)
            .transpose()
    }

    /// The member signing in as the OAuth subject `subject`, with its organization.
    pub async fn member_by_oauth_subject(
        &self,
        subject: &str,
    ) -> StoreResult<Option<(Member, Organization)>> {
        let row = sqlx::query(
            "SELECT m.id AS member_id, m.name AS member_name, m.role, m.oauth_subject, \
             o.id, o.slug, o.name FROM members m JOIN organizations o ON o.id = m.org_id \
             WHERE m.oauth_subject = $1",
        )
        .bind(subject)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let org = org_from(&row)?;
        let member = Member {
            id: row.try_get("member_id")?,
            org_id: org.id.clone(),
            name: row.try_get("member_name")?,
            role: row.try_get("role")?,
            oauth_subject: row.try_get("oauth_subject")?,
        };
        Ok(Some((member, org)))
    }
}
