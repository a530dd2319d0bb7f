//! [`end_all_programs`] ends every program of the process: alone in its test binary, since it
//! would end the programs of the other tests too.

#![cfg(unix)]

mod common;

use common::{ended, hanging, pidfile, thinking_forever, wait_for_file};
use zertz_arena::players::Models;
use zertz_arena::players::command::end_all_programs;
use zertz_env::{Player, Position, Variant};

#[test]
fn every_program_can_be_ended_from_elsewhere() {
    let file = pidfile("end-all");
    let asked = pidfile("end-all-asked");
    let _ = std::fs::remove_file(&asked);
    let mut p = hanging(&file, &thinking_forever(&asked)).build(0, &Models::new()).unwrap();
    std::thread::scope(|s| {
        // Once the program thinks about its move.
        s.spawn(|| {
            wait_for_file(&asked);
            end_all_programs();
        });
        let e = p.choose(&Position::new(Variant::default(), Player::P0)).unwrap_err().to_string();
        assert!(e.contains("ended before it answered 'genmove'"), "{e}");
    });
    assert!(ended(&file), "the program's own child is ended too");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&asked);
}
