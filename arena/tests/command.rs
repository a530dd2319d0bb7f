//! `cmd:` players: their specs, and programs that fail in every way a [`CommandBot`] must
//! report (shell scripts stand in for broken engines; the real engine is played in the `zertz`
//! command's tests).

mod common;

use std::time::{Duration, Instant};

use zertz_arena::config::MatchSettings;
use zertz_arena::matches::{MatchConfig, MatchError, run_match, run_match_until};
use zertz_arena::players::command::{CommandBot, ProgramLimits};
use zertz_arena::players::{BotError, Models, PlayerSpec, SpecError};
use zertz_env::{Player, Position, Variant};
use zertz_settings::Seconds;

/// The error of a player that must not build.
fn build_error(spec: &PlayerSpec) -> SpecError {
    match spec.build(0, &Models::new()) {
        Ok(p) => panic!("{spec} built {}", p.name()),
        Err(e) => e,
    }
}

fn spec(text: &str) -> PlayerSpec {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn command_specs_read_and_write_back() {
    let s = spec("cmd:zertz engine --player nn:best.safetensors:800");
    let words = ["zertz", "engine", "--player", "nn:best.safetensors:800"];
    assert_eq!(s, PlayerSpec::Command(words.iter().map(|w| w.to_string()).collect()));
    assert_eq!(s.to_string(), "cmd:zertz engine --player nn:best.safetensors:800");
    assert_eq!(s.command().map(<[String]>::len), Some(4));
    assert_eq!(s.network(), None, "a program's network is its own business");
    let quoted = spec(r#"CMD:  "/opt/my engine/zertz"   engine --player "nn:a b.safetensors""#);
    assert_eq!(quoted.command().unwrap()[0], "/opt/my engine/zertz");
    assert_eq!(quoted.command().unwrap()[3], "nn:a b.safetensors");
    assert_eq!(
        quoted.to_string(),
        r#"cmd:"/opt/my engine/zertz" engine --player "nn:a b.safetensors""#
    );
    assert_eq!(spec(&quoted.to_string()), quoted);
    for bad in ["cmd", "cmd:", "cmd:   ", "cmd:\"\" x", "cmd:\"zertz engine"] {
        let e = bad.parse::<PlayerSpec>().unwrap_err();
        assert!(matches!(e, SpecError::BadCommand { .. }), "{bad}: {e}");
        assert!(e.to_string().contains("cmd:PROGRAM ARGS"), "{e}");
    }
    let e = "alphazero".parse::<PlayerSpec>().unwrap_err();
    assert!(e.to_string().contains("cmd:PROGRAM ARGS"), "the kinds are listed: {e}");
}

#[test]
fn a_program_that_cannot_start_is_named() {
    let e = build_error(&spec("cmd:/no/such/engine --x"));
    assert!(matches!(&e, SpecError::Command { program, .. } if program == "/no/such/engine"));
    assert!(e.to_string().starts_with("cannot start the engine '/no/such/engine': "), "{e}");
}

#[cfg(unix)]
mod broken_engines {
    use super::common::{ended, hanging, pidfile};
    use super::*;

    /// A `cmd:` player running a shell script as its engine.
    fn script(body: &str) -> PlayerSpec {
        PlayerSpec::Command(vec!["sh".into(), "-c".into(), body.into()])
    }

    fn start() -> Position {
        Position::new(Variant::default(), Player::P0)
    }

    /// Answers `name`, then everything with `answer`, and `genmove` with `genmove`.
    fn engine(answer: &str, genmove: &str) -> PlayerSpec {
        script(&format!(
            "while read -r line; do case \"$line\" in genmove) printf '{genmove}\\n\\n';; \
             quit) exit 0;; name) printf '= fake\\n\\n';; *) printf '{answer}\\n\\n';; esac; done"
        ))
    }

    fn choose_error(spec: &PlayerSpec) -> String {
        let mut p = spec.build(0, &Models::new()).unwrap();
        match p.choose(&start()) {
            Err(e @ BotError::Engine { .. }) => e.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_programs_cpu_time_is_the_players() {
        // It counts to 300,000 in the shell before each answer to genmove: CPU time in its own
        // process, none in ours.
        let mut p = script(
            "while read -r line; do case \"$line\" in genmove) i=0; while [ $i -lt 300000 ]; do \
             i=$((i+1)); done; printf '= Wa1,b1\\n\\n';; quit) exit 0;; name) printf '= fake\\n\\n';; \
             *) printf '=\\n\\n';; esac; done",
        )
        .build(0, &Models::new())
        .unwrap();
        let before = p.cpu_elsewhere();
        let a = p.choose(&start()).unwrap();
        assert_eq!(start().action_to_string(&a), "Wa1,b1");
        let spent = p.cpu_elsewhere() - before;
        assert!(spent >= std::time::Duration::from_millis(50), "{spent:?}");
    }

    #[test]
    fn a_program_that_does_not_speak_the_protocol_does_not_start() {
        let e = build_error(&script("read x; echo hello"));
        let msg = e.to_string();
        assert!(msg.starts_with("cannot start the engine 'sh': "), "{msg}");
        assert!(msg.contains("it answered 'hello' to 'name'"), "{msg}");
        let e = build_error(&script("exit 3"));
        assert!(e.to_string().contains("before it answered 'name'"), "{e}");
    }

    #[test]
    fn an_engine_that_ends_is_an_error() {
        let e = choose_error(&script("read x; printf '= fake\\n\\n'; exit 4"));
        assert!(e.contains("it ended before it answered 'newgame 37'"), "{e}");
        assert!(e.contains("exit status: 4"), "the status is reported: {e}");
    }

    #[test]
    fn a_refusal_carries_the_engines_message() {
        let e = choose_error(&engine("? not today", "= pass"));
        assert!(e.ends_with("it answered '? not today' to 'newgame 37'"), "{e}");
        assert!(e.starts_with("player cmd:sh -c "), "{e}");
    }

    #[test]
    fn an_illegal_answer_is_an_error() {
        let e = choose_error(&engine("=", "= Wz9,a1"));
        assert!(e.contains("it answered 'Wz9,a1' to 'genmove', not a legal move here"), "{e}");
        let e = choose_error(&engine("=", "= b4xd6"));
        assert!(e.contains("illegal move b4xd6"), "{e}");
        let e = choose_error(&engine("=", "garbage"));
        assert!(e.contains("not '= ...' or '? ...'"), "{e}");
    }

    #[test]
    fn ids_and_extra_lines_in_answers_are_read() {
        let spec = engine("=5", "=17 Wd4,a1\\nmore text");
        let mut p = spec.build(0, &Models::new()).unwrap();
        let a = p.choose(&start()).unwrap();
        assert_eq!(start().action_to_string(&a), "Wd4,a1");
    }

    #[test]
    fn a_failing_engine_stops_a_match() {
        let settings =
            MatchSettings { games: 2, threads: 1, max_actions: 100, ..MatchSettings::default() };
        let config = MatchConfig::with(engine("? broken", "= pass"), spec("random"), settings);
        match run_match(&config, &|_| Ok(())) {
            Err(MatchError::Bot { error: BotError::Engine { error, .. }, .. }) => {
                assert!(error.contains("? broken"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }

    fn limits(seconds: f64) -> ProgramLimits {
        ProgramLimits::with_answer_time(Duration::from_secs_f64(seconds))
    }

    #[test]
    fn a_program_that_never_answers_is_given_up_with_what_it_started() {
        let file = pidfile("mute");
        let started = Instant::now();
        let mute: Vec<String> =
            ["sh", "-c", &format!("sleep 1000 & echo $! > '{}'; wait", file.display())]
                .map(String::from)
                .to_vec();
        let e = CommandBot::start_with(&mute, limits(0.3)).unwrap_err().to_string();
        assert!(e.contains("it did not answer 'name' within 0.3 s"), "{e}");
        // Given up, not waited for until its `sleep 1000` ends.
        assert!(started.elapsed() < common::NEVER, "{:?}", started.elapsed());
        assert!(ended(&file), "the program's own child is ended with it");
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_program_that_hangs_on_genmove_fails_the_match_at_its_answer_time() {
        // The answer time holds for `name` and `newgame` too: long enough for a shell to start
        // on a busy machine.
        let file = pidfile("hang");
        let settings = MatchSettings {
            games: 1,
            threads: 1,
            answer_time: Seconds(3.0),
            ..MatchSettings::default()
        };
        let config = MatchConfig::with(hanging(&file, "sleep 1000"), spec("random"), settings);
        let started = Instant::now();
        match run_match(&config, &|_| Ok(())) {
            Err(MatchError::Bot { error: BotError::Engine { error, .. }, .. }) => {
                assert!(error.contains("did not answer 'genmove' within 3 s"), "{error}");
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() >= Duration::from_secs(3), "{:?}", started.elapsed());
        assert!(started.elapsed() < common::NEVER, "{:?}", started.elapsed());
        assert!(ended(&file));
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn an_answer_that_floods_is_cut_at_the_size_limit() {
        // Lines without end (never the empty line that closes an answer), then one endless line.
        for flood in ["yes '= Wd4,a1'", "printf '= '; tr '\\0' x < /dev/zero"] {
            let file = pidfile("flood");
            let mut p = hanging(&file, flood).build(0, &Models::new()).unwrap();
            let started = Instant::now();
            let e = p.choose(&start()).unwrap_err().to_string();
            assert!(e.contains("its answer to 'genmove' is longer than 1048576 bytes"), "{e}");
            assert!(started.elapsed() < common::NEVER, "{:?}", started.elapsed());
            assert!(ended(&file), "{flood}");
            let _ = std::fs::remove_file(&file);
        }
    }

    #[test]
    fn a_stop_ends_a_thinking_program_at_once() {
        // Stopped once a program thinks about its move; it would think for 1000 s, and the
        // match would wait an hour for its answer.
        let (file, asked) = (pidfile("stop"), pidfile("stop-asked"));
        let _ = std::fs::remove_file(&asked);
        let settings = MatchSettings {
            games: 4,
            threads: 2,
            answer_time: Seconds(3600.0),
            ..MatchSettings::default()
        };
        let player = hanging(&file, &common::thinking_forever(&asked));
        let config = MatchConfig::with(player, spec("random"), settings);
        let started = Instant::now();
        let result =
            common::stopped_when_file(&asked, |stop| run_match_until(&config, &|_| Ok(()), stop));
        assert!(matches!(result, Err(MatchError::Stopped { games: 0 })), "{result:?}");
        assert!(started.elapsed() < common::NEVER, "{:?}", started.elapsed());
        assert!(ended(&file));
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_file(&asked);
    }
}
