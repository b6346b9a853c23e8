// SPDX-License-Identifier: LGPL-2.1-or-later
// A Rust workload for the demangling test (tests/integration/test_names.py), built with
// -C symbol-mangling-version=v0: its hot function is a method of a struct in a module, reached through a generic
// function, so the report must show `<vprof_rust::work::Worker>::spin` and `vprof_rust::work::churn::<u32>`.
// The protocol of the other symbol workloads (workload-util.h): "--seconds N", "--wait-stdin".
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

mod work {
    pub struct Worker {
        pub state: u64,
    }

    impl Worker {
        #[inline(never)]
        pub fn spin(&mut self, rounds: u64) -> u64 {
            for i in 0..rounds {
                self.state = self.state.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
            self.state
        }
    }

    #[inline(never)]
    pub fn churn<T: Copy + Into<u64>>(seed: T, rounds: u64) -> u64 {
        let mut worker = Worker { state: seed.into() };
        worker.spin(rounds)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut seconds = 5.0f64;
    let mut wait = false;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--seconds" if i + 1 < args.len() => {
                seconds = args[i + 1].parse().unwrap_or(seconds);
                i += 1;
            }
            "--wait-stdin" => wait = true,
            _ => {}
        }
        i += 1;
    }
    if wait {
        println!("ready {}", std::process::id());
        std::io::stdout().flush().unwrap();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
            std::process::exit(1);
        }
    }
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let mut acc = 0u64;
    while Instant::now() < end {
        acc = acc.wrapping_add(work::churn(7u32, 200_000));
    }
    // Printed so the work cannot be optimized away.
    eprintln!("vprof-rust: {}", acc & 0xff);
}
