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
}

fn org_from(row: &AnyRow) -> StoreResult<Organization> {
    Ok(Organization {
        id: row.try_get("id")?,
        slug: row.try_get("slug")?,
        name: row.try_get("name")?,
    })
}

impl Store {
    /// Creates an organization and its owner member in one transaction.
    pub async fn create_org_with_owner(&self, slug: &str) -> StoreResult<(Organization, Member)> {
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
            "INSERT INTO members (id, org_id, name, role, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&owner.id)
        .bind(&owner.org_id)
        .bind(&owner.name)
        .bind(&owner.role)
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
}
