//! Records to step through at the web board: a boardspace SGF file, or JSON lines of this
//! project's game records (`zertz selfplay`, `zertz match`), read into one frame per turn.

use serde::Serialize;
use zertz_env::Game;
use zertz_env::records::GameRecord;

use crate::session::BoardView;

/// Most turns a record may have (no legal game comes near it).
pub const MAX_RECORD_TURNS: usize = 10_000;

/// Why a record cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An empty file.
    #[error("the record is empty")]
    Empty,
    /// An SGF file that cannot be read or replayed.
    #[error("bad SGF record: {0}")]
    Sgf(String),
    /// A JSON line that is not a game record or does not replay.
    #[error("bad game record on line {line}: {reason}")]
    Json {
        /// The line (from 1).
        line: usize,
        /// Why.
        reason: String,
    },
    /// A game index past the file's games.
    #[error("game {index} asked of a file with {games} games")]
    NoSuchGame {
        /// The index asked for (from 0).
        index: usize,
        /// Games in the file.
        games: usize,
    },
    /// More turns than [`MAX_RECORD_TURNS`].
    #[error("the record has more than {MAX_RECORD_TURNS} turns")]
    TooLong,
}

/// One game of a record, ready to step through.
#[derive(Clone, Debug, Serialize)]
pub struct RecordView {
    /// Games in the file (an SGF file holds one).
    pub games: usize,
    /// The game shown (from 0).
    pub game: usize,
    /// Names of P0 and P1, when the record has them.
    pub players: Option<[String; 2]>,
    /// The moves in notation.
    pub moves: Vec<String>,
    /// The position before the first move and after every move (`moves.len() + 1` frames).
    pub frames: Vec<BoardView>,
    /// The result in words.
    pub result: String,
}

/// Reads game `index` of a record file's text.
pub fn read(text: &str, index: usize) -> Result<RecordView, RecordError> {
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return Err(RecordError::Empty);
    }
    if text.starts_with('(') {
        if index != 0 {
            return Err(RecordError::NoSuchGame { index, games: 1 });
        }
        let record =
            zertz_env::sgf::Record::parse(text).map_err(|e| RecordError::Sgf(e.to_string()))?;
        let replay = record.replay().map_err(|e| RecordError::Sgf(e.to_string()))?;
        let result = match replay.winner {
            Some(p) => format!("{p} wins ({})", replay.end.name()),
            None => format!("no winner ({})", replay.end.name()),
        };
        return view(&replay.game, 1, 0, None, result);
    }
    let lines: Vec<(usize, &str)> =
        text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).collect();
    let Some(&(n, line)) = lines.get(index) else {
        return Err(RecordError::NoSuchGame { index, games: lines.len() });
    };
    let json = |reason: String| RecordError::Json { line: n + 1, reason };
    let record = GameRecord::from_json(line).map_err(|e| json(e.to_string()))?;
    let game = record.replay().map_err(|e| json(e.to_string()))?;
    let end = format!("{:?}", record.end).to_lowercase();
    let result = match record.winner {
        Some(p) => format!("{p} wins ({end})"),
        None => format!("no winner ({end})"),
    };
    view(&game, lines.len(), index, record.players.clone(), result)
}

fn view(
    game: &Game,
    games: usize,
    index: usize,
    players: Option<[String; 2]>,
    result: String,
) -> Result<RecordView, RecordError> {
    if game.moves().len() > MAX_RECORD_TURNS {
        return Err(RecordError::TooLong);
    }
    let mut pos = *game.start();
    let mut frames = vec![BoardView::of(&pos)];
    for m in game.moves() {
        pos.play_unchecked(m);
        frames.push(BoardView::of(&pos));
    }
    Ok(RecordView { games, game: index, players, moves: game.notation(), frames, result })
}

#[cfg(test)]
mod tests {
    use super::*;
    use zertz_env::{Player, Variant};

    fn json_line(moves: &[&str]) -> String {
        let mut g = Game::new(Variant::default(), Player::P0);
        for m in moves {
            g.play_str(m).unwrap();
        }
        GameRecord::of_game(7, &g, zertz_env::records::End::Win, None, None).to_json()
    }

    #[test]
    fn json_lines_give_one_frame_per_turn() {
        let text = format!("{}\n\n{}\n", json_line(&["Wd4,a1"]), json_line(&["Wd4,a1", "Gd5,a2"]));
        let v = read(&text, 1).unwrap();
        assert_eq!((v.games, v.game), (2, 1));
        assert_eq!(v.moves, vec!["Wd4,a1", "Gd5,a2"]);
        assert_eq!(v.frames.len(), 3);
        let d4 = |f: &BoardView| f.cells.iter().find(|c| c.name == "d4").unwrap().marble;
        assert_eq!((d4(&v.frames[0]), d4(&v.frames[1])), (None, Some('W')));
        assert!(matches!(read(&text, 2), Err(RecordError::NoSuchGame { index: 2, games: 2 })));
    }

    #[test]
    fn bad_records_are_errors_with_reasons() {
        assert!(matches!(read("  \n", 0), Err(RecordError::Empty)));
        assert!(matches!(read("(;GM[1]", 0), Err(RecordError::Sgf(_))));
        let e = read("{\"game\": 1}\n", 0).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(matches!(read("not json", 0), Err(RecordError::Json { line: 1, .. })));
    }
}
