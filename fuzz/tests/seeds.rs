//! The checked-in seeds are what `sitefile_fuzz::seeds` builds, and every property holds on each.

use sitefile_fuzz::seeds::{self, TARGETS};
use std::path::{Path, PathBuf};

fn seeds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds")
}

fn corpus() -> Option<PathBuf> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    corpus.join("urls.txt").is_file().then_some(corpus)
}

/// With `SITEFILE_WRITE_SEEDS=1` the seed files are written (files of the seeded targets that
/// are no seed are removed); without it, they are compared.
#[test]
fn seeds_are_what_the_generator_builds() {
    let Some(corpus) = corpus() else {
        eprintln!("../shared/corpus is not there: the seeds are not compared");
        return;
    };
    let all = seeds::seeds(Some(&corpus));
    let write = std::env::var_os("SITEFILE_WRITE_SEEDS").is_some();
    for target in TARGETS {
        let dir = seeds_dir().join(target);
        let wanted: Vec<_> = all.iter().filter(|s| s.target == target).collect();
        if write {
            std::fs::create_dir_all(&dir).expect("the seeds directory");
            for entry in std::fs::read_dir(&dir).expect("the seeds directory") {
                let path = entry.expect("an entry").path();
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                if !wanted.iter().any(|s| s.name == name) {
                    std::fs::remove_file(&path).expect("a stale seed removed");
                }
            }
            for seed in &wanted {
                std::fs::write(dir.join(&seed.name), &seed.bytes).expect("a seed written");
            }
            continue;
        }
        for seed in &wanted {
            let on_disk = std::fs::read(dir.join(&seed.name))
                .unwrap_or_else(|e| panic!("seeds/{target}/{}: {e}", seed.name));
            assert!(
                on_disk == seed.bytes,
                "seeds/{target}/{} is stale: run SITEFILE_WRITE_SEEDS=1 cargo test",
                seed.name
            );
        }
    }
}

fn run_dir(target: &str, run: fn(&[u8])) {
    let dir = seeds_dir().join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("an entry").path();
        let bytes = std::fs::read(&path).expect("a seed");
        eprintln!("{}", path.display());
        run(&bytes);
        count += 1;
    }
    assert!(count > 0, "no seeds in {}", dir.display());
}

#[test]
fn every_admin_seed_holds() {
    run_dir("admin", sitefile_fuzz::admin::run);
}

#[test]
fn every_edge_seed_holds() {
    run_dir("edge", sitefile_fuzz::edge::run);
}

/// Seeds built without the corpus hold too (what a checkout without `../shared` fuzzes).
#[test]
fn generated_seeds_hold() {
    for seed in seeds::seeds(corpus().as_deref()) {
        match seed.target {
            "admin" => sitefile_fuzz::admin::run(&seed.bytes),
            "edge" => sitefile_fuzz::edge::run(&seed.bytes),
            _ => {}
        }
    }
}
