//! `scale-site SITE FACTOR DIR`: writes the corpus site SITE copied FACTOR times as a site
//! directory at DIR (see `sitefile_benches::write_scaled_site`), for benchmarks outside Rust
//! (`sitefile serve`, the Node package) on a site ten or a hundred times larger.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [site, factor, dir] = args.as_slice() else {
        eprintln!("usage: scale-site SITE FACTOR DIR");
        return ExitCode::from(2);
    };
    let Ok(factor) = factor.parse::<usize>() else {
        eprintln!("scale-site: FACTOR must be a whole number, got {factor}");
        return ExitCode::from(2);
    };
    match sitefile_benches::write_scaled_site(site, factor.max(1), &PathBuf::from(dir)) {
        Ok(blocks) => {
            println!("{dir}: {blocks} blocks ({site} × {factor})");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scale-site: {dir}: {e}");
            ExitCode::FAILURE
        }
    }
}
