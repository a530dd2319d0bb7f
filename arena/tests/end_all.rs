//! [`end_all_programs`] ends every program of the process: alone in its test binary, since it
//! would end the programs of the other tests too.

#![cfg(unix)]

mod common;

use std::time::Duration;

use common::{ended, hanging, pidfile};
use zertz_arena::players::Models;
use zertz_arena::players::command::end_all_programs;
use zertz_env::{Player, Position, Variant};

#[test]
fn every_program_can_be_ended_from_elsewhere() {
    let file = pidfile("end-all");
    let mut p = hanging(&file, "sleep 1000").build(0, &Models::new()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            end_all_programs();
        });
        let e = p.choose(&Position::new(Variant::default(), Player::P0)).unwrap_err().to_string();
        assert!(e.contains("ended before it answered 'genmove'"), "{e}");
    });
    assert!(ended(&file), "the program's own child is ended too");
    let _ = std::fs::remove_file(&file);
}
