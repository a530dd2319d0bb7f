//! The batched evaluator: observations and legal masks in, policy logits and values out.

use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Board, Outcome, Position, SplitMix64};

use crate::config::Preset;
use crate::priors::{BadLogit, Priors};

/// A batch of `B` positions to evaluate, all of one board.
#[derive(Debug)]
pub struct Batch<'a> {
    /// The board shape of every position.
    pub board: Board,
    /// The positions themselves (for evaluators that play, such as rollouts).
    pub positions: &'a [Position],
    /// Observation planes `[B, C, H, W]` (empty when the evaluator does not want them).
    pub planes: &'a [f32],
    /// Global features `[B, G]` (empty when the evaluator does not want them).
    pub globals: &'a [f32],
    /// Legal masks `[B, A]` (empty when the evaluator does not want them).
    pub masks: &'a [bool],
}

impl Batch<'_> {
    /// Number of positions `B`.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// Where an evaluator writes its answers: policy logits `[B, A]` (only legal entries are read) and
/// values `[B]` in `-1..=1`, from the perspective of the player to move in each position.
#[derive(Debug)]
pub struct Output<'a> {
    /// `[B, A]`.
    pub logits: &'a mut [f32],
    /// `[B]`.
    pub values: &'a mut [f32],
}

/// An evaluator failed (a model error, a Python exception, a wrong output shape).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("evaluator failed: {0}")]
pub struct EvalError(pub String);

/// The number format a network computes in (`--precision`, the `precision` keyword, a player's
/// `nn:MODEL:SIMS:PRECISION`). Networks are trained and exported in fp32; a model is converted when
/// it is loaded.
///
/// ```
/// use zertz_search::Precision;
/// assert_eq!(" BF16".parse::<Precision>(), Ok(Precision::Bf16));
/// assert_eq!(Precision::Auto.on(true), Precision::Bf16);
/// assert_eq!(Precision::Auto.on(false), Precision::Fp32);
/// assert_eq!(Precision::Fp16.on(false), Precision::Fp16);
/// assert!("fp8".parse::<Precision>().unwrap_err().to_string().contains("not a precision"));
/// for p in Precision::ALL {
///     assert_eq!(p.to_string().parse::<Precision>(), Ok(p));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precision {
    /// bf16 on a GPU, fp32 on the CPU.
    #[default]
    Auto,
    /// 32-bit floats.
    Fp32,
    /// bfloat16 (8 bits of exponent, as fp32, and 8 of mantissa).
    Bf16,
    /// IEEE half precision.
    Fp16,
}

/// Text that names no [`Precision`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a precision: use auto, fp32, bf16 or fp16")]
pub struct UnknownPrecision(pub String);

impl Precision {
    /// Every precision, as written.
    pub const ALL: [Precision; 4] =
        [Precision::Auto, Precision::Fp32, Precision::Bf16, Precision::Fp16];

    /// What `auto` means on a device: bf16 on a GPU, fp32 on the CPU; the others stay.
    pub fn on(self, gpu: bool) -> Precision {
        match self {
            Precision::Auto if gpu => Precision::Bf16,
            Precision::Auto => Precision::Fp32,
            other => other,
        }
    }

    /// The name, as parsed.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Precision {
    type Err = UnknownPrecision;

    /// `auto`, `fp32`, `bf16` or `fp16` (any case).
    fn from_str(s: &str) -> Result<Precision, UnknownPrecision> {
        let t = s.trim().to_ascii_lowercase();
        Precision::ALL.into_iter().find(|p| p.name() == t).ok_or(UnknownPrecision(s.to_string()))
    }
}

zertz_settings::text_setting!(Precision);

/// Evaluates batches of positions. Search calls it with every leaf it collected in a round, across
/// all the games it searches, so that a network sees large batches.
pub trait Evaluator: Send + Sync {
    /// Whether the batch must carry planes, globals and masks (a network) or only positions.
    fn wants_encoding(&self) -> bool {
        true
    }

    /// The search settings that suit it when none are named ([`Preset::Default`]; evaluators
    /// without a policy say [`Preset::Rollout`]).
    fn preset(&self) -> Preset {
        Preset::Default
    }

    /// Writes policy logits and values for every position of the batch.
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError>;

    /// Evaluates `batch` as [`Evaluator::evaluate`] does and turns each position's logits into
    /// its [`Priors`] at `temperature`, what the search expands its leaves from: `out` holds the
    /// values and the priors after. The default makes the priors here, after `evaluate`, on the
    /// thread that evaluated the batch.
    fn evaluate_priors(
        &self,
        batch: &Batch<'_>,
        temperature: f32,
        out: &mut Evaluated,
    ) -> Result<(), EvalError> {
        out.evaluate_all(self, batch, temperature)
    }

    /// Writes the values and the legal actions' logits alone (by the batch's masks, which it
    /// must carry), position after position, each position's in the order of the action space,
    /// into `out`: what the inference threads of a
    /// [`BatchingEvaluator`](crate::batching::BatchingEvaluator) hand their callers. A network on
    /// a GPU sends no others back to the host; the default evaluates every logit into
    /// `out.room` and gathers the legal ones.
    fn evaluate_legal(&self, batch: &Batch<'_>, out: &mut LegalAnswers) -> Result<(), EvalError> {
        out.check_masks(batch)?;
        let LegalAnswers { values, legal, room } = out;
        values.clear();
        values.resize(batch.len(), 0.0);
        room.resize(batch.masks.len(), 0.0);
        self.evaluate(batch, &mut Output { logits: room, values })?;
        legal.clear();
        legal.extend(room.iter().zip(batch.masks).filter(|(_, m)| **m).map(|(l, _)| *l));
        Ok(())
    }
}

/// What [`Evaluator::evaluate_legal`] answers: values `[B]` and the legal actions' logits alone,
/// position after position (each position's in the order of the action space). The caller
/// keeps it from one batch to the next.
#[derive(Debug, Default)]
pub struct LegalAnswers {
    /// `[B]`, as [`Output::values`].
    pub values: Vec<f32>,
    /// As many as the batch's masks have legal actions.
    pub legal: Vec<f32>,
    /// Room for every logit `[B, A]`, for an evaluator that computes them all.
    pub room: Vec<f32>,
}

impl LegalAnswers {
    /// Refuses a batch without masks for every position: the legal logits are known by them.
    pub fn check_masks(&self, batch: &Batch<'_>) -> Result<(), EvalError> {
        match batch.masks.len() == batch.len() * ActionSpace::new(batch.board).len() {
            true => Ok(()),
            false => Err(EvalError("the legal logits need the batch's legal masks".into())),
        }
    }
}

/// What [`Evaluator::evaluate_priors`] answers for a batch: each position's value and its
/// [`Priors`]. A search keeps one from one batch to the next.
#[derive(Debug, Default)]
pub struct Evaluated {
    /// `[B]`, as [`Output::values`].
    pub(crate) values: Vec<f32>,
    /// Each position's priors, in the batch's order.
    pub(crate) priors: Priors,
    /// `[B, A]`: the logits the priors are made from.
    pub(crate) logits: Vec<f32>,
}

impl Evaluated {
    /// Has `evaluator` write every logit and value of `batch` (into buffers sized for it), then
    /// makes the priors of its positions here at `temperature` (what
    /// [`Evaluator::evaluate_priors`] does by default).
    pub(crate) fn evaluate_all<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &E,
        batch: &Batch<'_>,
        temperature: f32,
    ) -> Result<(), EvalError> {
        self.values.clear();
        self.values.resize(batch.len(), 0.0);
        self.logits.resize(batch.len() * ActionSpace::new(batch.board).len(), 0.0);
        self.priors.clear();
        evaluator
            .evaluate(batch, &mut Output { logits: &mut self.logits, values: &mut self.values })?;
        Ok(self.priors.extend(batch.positions, &self.logits, temperature)?)
    }

    /// Takes the values and the priors of `batch` from its legal logits alone (as
    /// [`Evaluator::evaluate_legal`] writes them) at `temperature`.
    pub(crate) fn take_legal(
        &mut self,
        batch: &Batch<'_>,
        legal: &[f32],
        values: &[f32],
        temperature: f32,
    ) -> Result<(), EvalError> {
        let b = batch.len();
        let set = batch.masks.iter().filter(|&&m| m).count();
        if values.len() != b || legal.len() != set || batch.masks.is_empty() && b > 0 {
            return Err(EvalError(format!(
                "{} values and {} legal logits for {b} positions with {set} legal actions",
                values.len(),
                legal.len()
            )));
        }
        self.values.clear();
        self.values.extend_from_slice(values);
        self.priors.clear();
        Ok(self.priors.extend_legal(batch.positions, batch.masks, legal, temperature)?)
    }
}

impl From<BadLogit> for EvalError {
    fn from(bad: BadLogit) -> EvalError {
        EvalError(format!(
            "the logit of legal action {} of position {} of the batch is {}, not a finite number",
            bad.action, bad.position, bad.logit
        ))
    }
}

/// A shared evaluator evaluates as the one it points to.
impl<E: Evaluator + ?Sized> Evaluator for std::sync::Arc<E> {
    fn wants_encoding(&self) -> bool {
        (**self).wants_encoding()
    }

    fn preset(&self) -> Preset {
        (**self).preset()
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        (**self).evaluate(batch, out)
    }

    fn evaluate_priors(
        &self,
        batch: &Batch<'_>,
        temperature: f32,
        out: &mut Evaluated,
    ) -> Result<(), EvalError> {
        (**self).evaluate_priors(batch, temperature, out)
    }

    fn evaluate_legal(&self, batch: &Batch<'_>, out: &mut LegalAnswers) -> Result<(), EvalError> {
        (**self).evaluate_legal(batch, out)
    }
}

/// Uniform priors and value 0: search with it measures the search alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(&self, _batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        out.logits.fill(0.0);
        out.values.fill(0.0);
        Ok(())
    }
}

/// Uniform priors and the mean result of random playouts: classic Monte Carlo tree search.
#[derive(Clone, Copy, Debug)]
pub struct RolloutEvaluator {
    /// Playouts per position.
    pub rollouts: u32,
    /// Seed of the playouts (mixed with each position's hash).
    pub seed: u64,
}

impl Default for RolloutEvaluator {
    fn default() -> RolloutEvaluator {
        RolloutEvaluator { rollouts: 1, seed: 0 }
    }
}

/// Plays uniformly random legal actions to the end; returns the score of `for_player`. Games longer
/// than `limit` actions count as draws.
pub fn random_playout(pos: &Position, rng: &mut SplitMix64, limit: u32) -> Outcome {
    let mut p = *pos;
    for _ in 0..limit {
        if let Some(o) = p.outcome() {
            return o;
        }
        let n = p.count_legal_actions();
        match p.nth_legal_action(rng.below(n)) {
            Some(a) => p.play_action_unchecked(&a),
            None => break,
        }
    }
    p.outcome().unwrap_or(Outcome::Draw)
}

impl Evaluator for RolloutEvaluator {
    fn wants_encoding(&self) -> bool {
        false
    }

    /// Uniform priors: [`Preset::Rollout`].
    fn preset(&self) -> Preset {
        Preset::Rollout
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        out.logits.fill(0.0);
        for (pos, v) in batch.positions.iter().zip(out.values.iter_mut()) {
            let mut rng = SplitMix64(self.seed ^ pos.hash());
            let n = self.rollouts.max(1);
            let total: i32 =
                (0..n).map(|_| random_playout(pos, &mut rng, 2000).score(pos.turn()) as i32).sum();
            *v = total as f32 / n as f32;
        }
        Ok(())
    }
}

/// Writes the encoding of `positions` of `board` (planes, globals and legal masks, what an
/// evaluator that wants an encoding is given) into the three buffers, each resized to hold it.
pub fn encode_batch(
    board: Board,
    positions: &[Position],
    planes: &mut Vec<f32>,
    globals: &mut Vec<f32>,
    masks: &mut Vec<bool>,
) {
    let (p, g, m) = batch_lengths(board, 1);
    planes.resize(positions.len() * p, 0.0);
    globals.resize(positions.len() * g, 0.0);
    masks.resize(positions.len() * m, false);
    for (i, pos) in positions.iter().enumerate() {
        pos.encode(&mut planes[i * p..(i + 1) * p], &mut globals[i * g..(i + 1) * g]);
        pos.legal_action_mask(&mut masks[i * m..(i + 1) * m]);
    }
}

/// A batch and its answers in buffers of its own, kept from one batch to the next (an inference
/// thread's merged batches, a search thread's part of a batch).
#[derive(Debug, Default)]
pub(crate) struct OwnedBatch {
    pub(crate) positions: Vec<Position>,
    pub(crate) planes: Vec<f32>,
    pub(crate) globals: Vec<f32>,
    pub(crate) masks: Vec<bool>,
    pub(crate) logits: Vec<f32>,
    pub(crate) values: Vec<f32>,
}

impl OwnedBatch {
    /// The batch (of `board`) and where its answers go, to hand to an evaluator.
    pub(crate) fn parts(&mut self, board: Board) -> (Batch<'_>, Output<'_>) {
        let batch = Batch {
            board,
            positions: &self.positions,
            planes: &self.planes,
            globals: &self.globals,
            masks: &self.masks,
        };
        (batch, Output { logits: &mut self.logits, values: &mut self.values })
    }
}

/// Shapes of the arrays of a batch of `b` positions of `board`: `(planes, globals, masks)` lengths.
pub fn batch_lengths(board: Board, b: usize) -> (usize, usize, usize) {
    let shape = Shape::of(board);
    (b * shape.planes_len(), b * GLOBALS, b * ActionSpace::new(board).len())
}
