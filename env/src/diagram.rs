//! A text drawing of a position for terminals, in the layout of `shared/rules/boards.md`.

use std::fmt::Write;

use crate::position::Position;
use crate::types::{Outcome, Player};

impl Position {
    /// Draws the board with columns upright: a vacant ring shows its name (`d4`), a marble its colour
    /// (`(W)`, `(G)`, `(B)`), a removed ring nothing. Pool, captures and the player to move follow.
    ///
    /// ```
    /// use zertz_env::{Position, Variant, Player};
    /// let text = Position::new(Variant::default(), Player::P0).diagram();
    /// assert!(text.contains("d7"));
    /// assert!(text.contains("P0 to move"));
    /// ```
    pub fn diagram(&self) -> String {
        let geo = self.geometry();
        let max_p = geo.rings().map(|r| geo.coords(r).1).max().unwrap_or(0);
        let width = geo.columns() * 4 + 2;
        let mut out = String::new();
        for p in (0..=max_p).rev() {
            let mut line = vec![b' '; width];
            for x in 0..geo.columns() {
                let Some(r) = geo.at_coords(x as i32, p as i32) else { continue };
                let token = if !self.has_ring(r) {
                    String::new()
                } else {
                    match self.marble_at(r) {
                        Some(m) => format!("({})", m.letter()),
                        None => format!(" {}", geo.name(r)),
                    }
                };
                for (i, b) in token.bytes().enumerate() {
                    line[x * 4 + i] = b;
                }
            }
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end();
            if !line.is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
        let _ = writeln!(
            out,
            "pool {}   P0 captured {}   P1 captured {}   (white/grey/black)",
            self.pool(),
            self.captures(Player::P0),
            self.captures(Player::P1)
        );
        match self.outcome() {
            Some(Outcome::Win(p)) => {
                let _ = writeln!(out, "game over: {p} wins");
            }
            Some(Outcome::Draw) => {
                let _ = writeln!(out, "game over: draw");
            }
            None => {
                let _ = write!(out, "{} to move", self.turn());
                if let Some(r) = self.chain() {
                    let _ = write!(out, ", the marble on {} must jump again", geo.name(r));
                }
                out.push('\n');
            }
        }
        out
    }
}
