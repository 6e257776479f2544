//! What a site derives from one content snapshot for the edge: its redirects, the published
//! preview hosts and (on first use) the texts of its secrets. Rebuilt on every swap, never per
//! request.

use crate::config::{PreviewHostsSetting, SecretKey};
use crate::content::Snapshot;
use crate::draft::PreviewHosts;
use crate::edge::redirects::REDIRECT_LOADERS;
use crate::edge::{RedirectTable, SiteFacts};
use crate::page_json::SecretTexts;
use parking_lot::{Mutex, RwLock};
use std::sync::{Arc, OnceLock};

/// The per-snapshot facts of the edge.
#[derive(Debug)]
pub(crate) struct Derived {
    pub snapshot: Arc<Snapshot>,
    pub redirects: RedirectTable,
    pub preview_hosts: PreviewHosts,
    /// What the snapshot's secrets decrypt to, collected the first time page JSON needs it.
    secret_texts: OnceLock<Arc<SecretTexts>>,
}

/// The settings the derived facts are built with (fixed at setup).
#[derive(Debug, Clone)]
pub(crate) struct DeriveSettings {
    pub preview_hosts: PreviewHostsSetting,
    pub site_name: Option<String>,
    pub trust_forwarded_host: bool,
}

impl Derived {
    /// The facts of `snapshot`.
    pub fn build(snapshot: &Arc<Snapshot>, settings: &DeriveSettings) -> Derived {
        Derived {
            snapshot: snapshot.clone(),
            redirects: RedirectTable::build(
                snapshot.revision(),
                snapshot.blocks_of_type(&REDIRECT_LOADERS),
            ),
            preview_hosts: PreviewHosts::new(
                &settings.preview_hosts,
                snapshot.site_block(),
                settings.site_name.as_deref(),
            )
            .trusting_forwarded_host(settings.trust_forwarded_host),
            secret_texts: OnceLock::new(),
        }
    }

    /// The texts the snapshot's secrets decrypt to under `key`, collected once per snapshot.
    pub fn secret_texts(&self, key: Option<&SecretKey>) -> Arc<SecretTexts> {
        self.secret_texts
            .get_or_init(|| Arc::new(SecretTexts::of(&self.snapshot, key)))
            .clone()
    }

    /// The facts as the edge policy reads them.
    pub fn facts(&self) -> SiteFacts<'_> {
        SiteFacts {
            uses_location: self.snapshot.uses_location(),
            redirects: &self.redirects,
            preview_hosts: &self.preview_hosts,
        }
    }
}

/// The derived facts serving now and the settings they are built with. Every rebuild (a swap,
/// new settings) runs holding the settings' lock, so two rebuilds never interleave and the last
/// one always built from the snapshot serving when it ran: facts are never left describing an
/// older snapshot than the one serving.
#[derive(Debug)]
pub(crate) struct DerivedFacts {
    current: RwLock<Arc<Derived>>,
    settings: Mutex<DeriveSettings>,
}

impl DerivedFacts {
    /// The facts of `snapshot` under `settings`.
    pub fn new(snapshot: &Arc<Snapshot>, settings: DeriveSettings) -> DerivedFacts {
        DerivedFacts {
            current: RwLock::new(Arc::new(Derived::build(snapshot, &settings))),
            settings: Mutex::new(settings),
        }
    }

    /// The facts serving now.
    pub fn current(&self) -> Arc<Derived> {
        self.current.read().clone()
    }

    /// Rebuilds the facts for `snapshot`, which just started serving, unless they describe it.
    pub fn swapped(&self, snapshot: &Arc<Snapshot>) {
        let settings = self.settings.lock();
        if !Arc::ptr_eq(&self.current.read().snapshot, snapshot) {
            *self.current.write() = Arc::new(Derived::build(snapshot, &settings));
        }
    }

    /// Changes the settings with `change` and rebuilds the facts for the snapshot `serving`
    /// returns, read under the same lock a swap's rebuild takes.
    pub fn resettle(
        &self,
        change: impl FnOnce(&mut DeriveSettings),
        serving: impl FnOnce() -> Arc<Snapshot>,
    ) {
        let mut settings = self.settings.lock();
        change(&mut settings);
        let snapshot = serving();
        *self.current.write() = Arc::new(Derived::build(&snapshot, &settings));
    }
}
