//! An SVG drawing of a position, for notebooks (`Game._repr_svg_`).
//!
//! The board is drawn as `shared/rules/boards.md` draws it, columns upright: ring `(x, p)` at
//! `x · √3/2` across and `p / 2` down from the top, in ring spacings. A ring is a grey donut with
//! its name in small letters; a marble is a white, grey or black disc; a removed ring is absent.
//! The marble that must continue a capture chain has a red outline. Whose turn it is (or the
//! outcome), the pool and the captures follow as text.

use std::fmt::Write;

use zertz_env::{Marble, Outcome, Player, Position};

/// Distance between neighbouring rings, in pixels.
const SPACING: f64 = 40.0;
const MARGIN: f64 = 26.0;
const LINE: f64 = 18.0;

fn marble_colours(m: Marble) -> (&'static str, &'static str, &'static str) {
    // (fill, outline, text on it)
    match m {
        Marble::White => ("#fbfbf8", "#6b6b6b", "#444444"),
        Marble::Grey => ("#9c9c9c", "#5a5a5a", "#111111"),
        Marble::Black => ("#1e1e1e", "#000000", "#dddddd"),
    }
}

fn counts(c: [u8; 3]) -> String {
    format!("W{} G{} B{}", c[0], c[1], c[2])
}

/// The SVG document of a position; `outcome` is the game's (it knows third repetition).
pub fn draw(pos: &Position, outcome: Option<Outcome>) -> String {
    let geo = pos.geometry();
    let dx = SPACING * 3f64.sqrt() / 2.0;
    let dy = SPACING / 2.0;
    let max_p = geo.rings().map(|r| geo.coords(r).1).max().unwrap_or(0) as f64;
    let min_p = geo.rings().map(|r| geo.coords(r).1).min().unwrap_or(0) as f64;
    let board_w = (geo.columns() as f64 - 1.0) * dx + 2.0 * MARGIN;
    let board_h = (max_p - min_p) * dy + 2.0 * MARGIN;
    let width = board_w.max(250.0);
    let height = board_h + 4.0 * LINE + 8.0;
    let x0 = (width - board_w) / 2.0 + MARGIN;

    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.1} {height:.1}" font-family="sans-serif">"#
    );
    let _ = write!(s, r##"<rect width="100%" height="100%" fill="#f4efe3"/>"##);
    for r in geo.rings() {
        if !pos.has_ring(r) {
            continue;
        }
        let (x, p) = geo.coords(r);
        let cx = x0 + x as f64 * dx;
        let cy = MARGIN + (max_p - p as f64) * dy;
        let name = geo.name(r);
        let _ = write!(
            s,
            r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="{:.1}" fill="none" stroke="#8d8676" stroke-width="{:.1}"/>"##,
            SPACING * 0.38,
            SPACING * 0.14,
        );
        let text_colour = match pos.marble_at(r) {
            Some(m) => {
                let (fill, outline, text) = marble_colours(m);
                let (outline, width) =
                    if pos.chain() == Some(r) { ("#d62728", 3.0) } else { (outline, 1.0) };
                let _ = write!(
                    s,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{:.1}" fill="{fill}" stroke="{outline}" stroke-width="{width:.1}"/>"#,
                    SPACING * 0.30,
                );
                text
            }
            None => "#6f6a5e",
        };
        let _ = write!(
            s,
            r#"<text x="{cx:.1}" y="{:.1}" font-size="{:.1}" text-anchor="middle" fill="{text_colour}">{name}</text>"#,
            cy + SPACING * 0.08,
            SPACING * 0.22,
        );
    }
    let status = match outcome {
        Some(Outcome::Win(p)) => format!("game over: {p} wins"),
        Some(Outcome::Draw) => "game over: draw".to_string(),
        None => match pos.chain() {
            Some(r) => format!("{} to move: the marble on {} jumps again", pos.turn(), geo.name(r)),
            None => format!("{} to move", pos.turn()),
        },
    };
    let lines = [
        status,
        format!("pool {}", counts(pos.pool().0)),
        format!("P0 captured {}", counts(pos.captures(Player::P0).0)),
        format!("P1 captured {}", counts(pos.captures(Player::P1).0)),
    ];
    for (i, line) in lines.iter().enumerate() {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="13" fill="#222222">{line}</text>"##,
            MARGIN * 0.5,
            board_h + (i as f64 + 1.0) * LINE,
        );
    }
    s.push_str("</svg>");
    s
}
