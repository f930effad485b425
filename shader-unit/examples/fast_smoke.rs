//! Quick timing of the fast engine against the reference on W1-W3 (development aid).
use shader_unit::bench::{Workload, run_workload};
use shader_unit::fast::FastEngine;
use shader_unit::interp::{ExecConfig, Interpreter};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let only = args.get(1).and_then(|s| Workload::parse(s));
    let reference = args.iter().any(|a| a == "ref");
    for w in Workload::ALL {
        if only.is_some_and(|o| o != w) {
            continue;
        }
        let mut f = FastEngine::new(ExecConfig::default());
        let r = run_workload(&mut f, w, 1_000_000, 2048).unwrap();
        print!("{:?} fast {:.1} Mv/s {} match={} {:?}", w, r.mvertices_per_sec(), r.hash_hex(), r.matches_reference(), f.stats());
        if reference {
            let mut i = Interpreter::new(ExecConfig::default());
            let ri = run_workload(&mut i, w, 1_000_000, 2048).unwrap();
            print!(" ref {:.1} Mv/s ratio {:.1}", ri.mvertices_per_sec(), r.mvertices_per_sec() / ri.mvertices_per_sec());
        }
        println!();
    }
}
