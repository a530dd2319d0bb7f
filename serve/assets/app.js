// The web board of zertz: draws the board as SVG and talks to the server's JSON API.
// No framework, no build step. The elements that tests use (data-cell, #move, #moves, #status,
// #new-game, #board, #blitz, #opponent, #colour, #undo) are stable.
"use strict";

const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const STEP = 56; // ring spacing in SVG units
const COLOUR_NAMES = { W: "white", G: "grey", B: "black" };

let game = null; // the game's view from the server (with .id)
let pick = {}; // the person's choice so far: {colour, at} or {from}
let mode = "play"; // "play" or "record"
let record = null; // {games, game, moves, frames, result, text}
let frame = 0; // the record frame shown
let analysis = null; // the last analysis of the shown position
let watching = false; // a game between bots is running
let busy = false; // a request is on its way

// Every POST says what it sends: JSON, or a record's text as bytes. The server refuses the types
// that another site's page could send without asking (text/plain, forms).
async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (method !== "GET") {
    const raw = typeof body === "string";
    init.headers["content-type"] = raw ? "application/octet-stream" : "application/json";
    init.body = raw ? body : JSON.stringify(body === undefined ? {} : body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    throw new Error(`${response.status} ${response.statusText}`);
  }
  if (!response.ok) throw new Error(data && data.error ? data.error : `${response.status}`);
  return data;
}

function say(text) {
  $("#message").textContent = text || "";
}

function shown() {
  return mode === "record" && record ? record.frames[frame] : game;
}

// ------------------------------------------------------------------------------ drawing

function svg(tag, attrs, parent) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function geometry(view) {
  const maxP = Math.max(...view.cells.map((c) => c.p));
  const maxX = Math.max(...view.cells.map((c) => c.x));
  const margin = STEP * 0.7;
  const at = {};
  for (const c of view.cells) {
    at[c.name] = {
      x: margin + c.x * STEP * 0.866,
      y: margin + (maxP - c.p) * STEP * 0.5,
    };
  }
  return { at, width: 2 * margin + maxX * STEP * 0.866, height: 2 * margin + maxP * STEP * 0.5 };
}

// Rings the person can click now, and how each click is read.
function choices() {
  if (mode !== "play" || !game || game.over || game.bot_to_move) return {};
  const legal = game.legal;
  const out = {};
  if (legal.hops.length > 0) {
    if (pick.from) {
      for (const h of legal.hops) if (h.from === pick.from) out[h.to] = "choice";
    } else {
      for (const h of legal.hops) out[h.from] = "choice";
    }
    return out;
  }
  if (!pick.colour) return out;
  if (!pick.at) {
    for (const at of Object.keys(legal.place)) out[at] = "choice";
  } else {
    for (const r of legal.place[pick.at] || []) out[r] = "remove-choice";
  }
  return out;
}

function lastRings() {
  const moves = mode === "record" ? record.moves.slice(0, frame) : game ? game.moves : [];
  const last = moves[moves.length - 1];
  return last ? ringsOf(last) : [];
}

// Placements are written with an upper-case colour (Wd4,a1), ring names in lower case.
function isPlacement(notation) {
  return /^[WGB][a-i]/.test(notation);
}

// The rings a move touches: where a marble goes, or every ring of a capture chain.
function ringsOf(notation) {
  const m = /^[WGB]([a-i]\d+)(?:,([a-i]\d+))?$/.exec(notation);
  if (m) return [m[1]];
  return notation.split("x").filter((s) => /^[a-i]\d+$/.test(s));
}

function draw() {
  const view = shown();
  const root = $("#board-svg");
  root.replaceChildren();
  if (!view) return;
  const geo = geometry(view);
  root.setAttribute("viewBox", `0 0 ${geo.width} ${geo.height}`);
  const defs = svg("defs", {}, root);
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "8", refY: "5", markerWidth: "4", markerHeight: "4", orient: "auto" }, defs);
  svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#0b3f8a" }, marker);
  const clickable = choices();
  const last = new Set(lastRings());
  for (const c of view.cells) {
    const p = geo.at[c.name];
    const g = svg("g", { class: "cell", "data-cell": c.name }, root);
    if (!c.ring) g.setAttribute("data-removed", "");
    if (c.marble) g.setAttribute("data-marble", c.marble);
    if (clickable[c.name]) g.classList.add(clickable[c.name]);
    if (pick.at === c.name || pick.from === c.name) g.classList.add("selected");
    if (last.has(c.name) && c.ring) g.classList.add("last");
    svg("circle", { class: "ring", cx: p.x, cy: p.y, r: STEP * 0.42 }, g);
    let marble = c.marble;
    let ghost = false;
    if (!marble && pick.at === c.name && pick.colour) {
      marble = pick.colour;
      ghost = true;
    }
    if (marble) {
      svg("circle", { class: `marble ${marble}${ghost ? " ghost" : ""}`, cx: p.x, cy: p.y, r: STEP * 0.3 }, g);
    } else if (c.ring) {
      const t = svg("text", { class: "name", x: p.x, y: p.y + 4 }, g);
      t.textContent = c.name;
    }
    g.addEventListener("click", () => clickRing(c.name));
  }
  drawAnalysis(root, view, geo);
}

// The score: the pool and each player's captures, by colour.
function drawScore() {
  const box = $("#score");
  box.replaceChildren();
  const view = shown();
  if (!view) return;
  const table = document.createElement("table");
  const head = table.insertRow();
  for (const h of ["", "white", "grey", "black"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  const names = mode === "play" && game ? game.players : record && record.players ? record.players : ["", ""];
  const rows = [
    ["pool", "pool", view.pool],
    ["P0", `P0 ${names[0]}`, view.captures[0]],
    ["P1", `P1 ${names[1]}`, view.captures[1]],
  ];
  for (const [key, label, counts] of rows) {
    const tr = table.insertRow();
    tr.dataset.score = key;
    if (view.turn === key) tr.classList.add("to-move");
    tr.insertCell().textContent = label;
    for (const m of ["W", "G", "B"]) {
      const td = tr.insertCell();
      td.dataset.colour = m;
      td.textContent = counts[m];
    }
  }
  box.appendChild(table);
}

function drawAnalysis(root, view, geo) {
  if (!analysis || analysis.position !== view.position) return;
  const layer = svg("g", { class: "overlay" }, root);
  const total = analysis.moves.reduce((s, m) => s + m.visits, 0) || 1;
  const labels = {};
  for (const m of analysis.moves.slice(0, 8)) {
    const rings = ringsOf(m.notation);
    const hop = !isPlacement(m.notation) && rings.length >= 2;
    if (hop) {
      const a = geo.at[rings[0]];
      const b = geo.at[rings[1]];
      if (a && b) svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y }, layer);
    }
    const at = rings[hop ? 1 : 0];
    if (at && geo.at[at]) labels[at] = (labels[at] || 0) + m.visits;
  }
  for (const [ring, visits] of Object.entries(labels)) {
    const p = geo.at[ring];
    const t = svg("text", { x: p.x, y: p.y - STEP * 0.22 }, layer);
    t.textContent = `${Math.round((100 * visits) / total)}%`;
  }
}

function drawColours() {
  const box = $("#colours");
  box.replaceChildren();
  if (mode !== "play" || !game || game.over || game.bot_to_move) return;
  const colours = game.legal.colours;
  if (colours.length === 0) return;
  const poolEmpty = ["W", "G", "B"].every((m) => game.pool[m] === 0);
  const mine = game.you === "P1" ? game.captures[1] : game.captures[0];
  for (const c of colours) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.colour = c;
    const count = poolEmpty ? `your captures ${mine[c]}` : `pool ${game.pool[c]}`;
    b.textContent = `${COLOUR_NAMES[c]} (${count})`;
    if (pick.colour === c) b.classList.add("selected");
    b.addEventListener("click", () => {
      pick = { colour: c };
      render();
    });
    box.appendChild(b);
  }
}

function drawMoves() {
  const list = $("#moves");
  list.replaceChildren();
  const moves = mode === "record" ? record.moves : game ? game.moves : [];
  moves.forEach((m, i) => {
    const li = document.createElement("li");
    li.textContent = m;
    if (mode === "record") {
      if (i === frame - 1) li.classList.add("current");
      li.addEventListener("click", () => {
        frame = i + 1;
        render();
      });
    }
    list.appendChild(li);
  });
  const current = list.querySelector("li.current") || list.lastElementChild;
  if (current) current.scrollIntoView({ block: "nearest" });
}

function drawStatus() {
  const status = $("#status");
  if (mode === "record") {
    $("#hint").textContent = "";
    $("#undo").disabled = true;
    $("#resign").disabled = true;
    $("#pass").hidden = true;
    status.textContent = `Record: turn ${frame} of ${record.moves.length}; ${record.result}`;
    $("#record-step").textContent = `${frame}/${record.moves.length}`;
    return;
  }
  if (!game) return;
  const names = `P0: ${game.players[0]}, P1: ${game.players[1]}`;
  status.textContent = game.status;
  let hint = "";
  if (!game.over && !game.bot_to_move && game.legal) {
    if (game.legal.hops.length > 0) {
      hint = pick.from
        ? "Capture: click where the marble lands."
        : "Capture: click the marble that jumps.";
    } else if (game.legal.pass) {
      hint = "No move: pass.";
    } else if (!pick.colour) {
      hint = "Choose a colour, then a ring to place it on.";
    } else if (!pick.at) {
      hint = `Click a vacant ring for the ${COLOUR_NAMES[pick.colour]} marble.`;
    } else {
      hint = "Click a free ring to remove (red).";
    }
  }
  $("#hint").textContent = hint;
  status.title = names;
  $("#undo").disabled = !game.can_undo || busy;
  $("#resign").disabled = game.over || busy;
  $("#pass").hidden = !(game.legal && game.legal.pass);
  $("#pause").hidden = game.you !== null || game.over;
  $("#pause").textContent = watching ? "Pause" : "Resume";
}

function drawAnalysisTable() {
  const body = $("#analysis tbody");
  body.replaceChildren();
  const view = shown();
  if (!analysis || !view || analysis.position !== view.position) {
    $("#analysis-value").textContent = "";
    return;
  }
  $("#analysis-value").textContent =
    `value ${analysis.value.toFixed(3)} for ${view.turn} after ${analysis.simulations} simulations` +
    (analysis.simulations < analysis.asked ? " (the search's memory was full)" : "");
  for (const m of analysis.moves.slice(0, 12)) {
    const tr = document.createElement("tr");
    for (const v of [m.notation, m.visits, m.prior.toFixed(3), m.value.toFixed(3)]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function render() {
  draw();
  drawScore();
  drawColours();
  drawMoves();
  drawStatus();
  drawAnalysisTable();
}

// ------------------------------------------------------------------------------ playing

function show(view) {
  game = view;
  pick = {};
  // One colour only: it is chosen already; in a capture chain, the jumping marble too.
  if (game.legal && game.legal.colours.length === 1 && game.legal.hops.length === 0) {
    pick = { colour: game.legal.colours[0] };
  }
  if (game.legal && game.chain && game.legal.hops.some((h) => h.from === game.chain)) {
    pick = { from: game.chain };
  }
  render();
}

async function request(method, path, body) {
  busy = true;
  document.body.dataset.busy = "1";
  try {
    const view = await api(method, path, body);
    say("");
    return view;
  } catch (e) {
    say(e.message);
    return null;
  } finally {
    busy = false;
    delete document.body.dataset.busy;
  }
}

// Lets the bot play while it is to move (one turn at a time when watching).
async function botMoves() {
  while (game && game.bot_to_move && mode === "play") {
    if (game.you === null) {
      if (!watching) return;
      await new Promise((r) => setTimeout(r, 250));
      if (!watching) return;
    }
    const id = game.id;
    drawStatus();
    const view = await request("POST", `/api/games/${id}/bot`);
    if (!view || !game || game.id !== id) return;
    show(view);
  }
}

async function playMove(text) {
  if (!game || busy) return false;
  const view = await request("POST", `/api/games/${game.id}/play`, { move: text });
  if (!view) {
    pick = {};
    render();
    return false;
  }
  show(view);
  await botMoves();
  return true;
}

function clickRing(name) {
  if (mode !== "play" || !game || busy || game.over || game.bot_to_move) return;
  const legal = game.legal;
  if (legal.hops.length > 0) {
    if (pick.from) {
      const hop = legal.hops.find((h) => h.from === pick.from && h.to === name);
      if (hop) return void playMove(hop.text);
    }
    pick = legal.hops.some((h) => h.from === name) ? { from: name } : {};
    return render();
  }
  if (!pick.colour) {
    say("Choose a marble colour first.");
    return;
  }
  if (!pick.at) {
    if (legal.place[name]) {
      const removes = legal.place[name];
      if (removes.length === 0) return void playMove(`${pick.colour}${name}`);
      pick = { colour: pick.colour, at: name };
    }
    return render();
  }
  if ((legal.place[pick.at] || []).includes(name)) {
    return void playMove(`${pick.colour}${pick.at},${name}`);
  }
  // Another vacant ring: move the marble there instead.
  pick = legal.place[name] ? { colour: pick.colour, at: name } : { colour: pick.colour };
  render();
}

async function newGame(event) {
  if (event) event.preventDefault();
  mode = "play";
  analysis = null;
  const colour = $("#colour").value;
  const body = {
    board: Number($("#board").value),
    blitz: $("#blitz").checked,
    opponent: $("#opponent").value.trim(),
    colour,
  };
  if (colour === "watch") body.opponent_b = $("#opponent-b").value.trim();
  const view = await request("POST", "/api/games", body);
  if (!view) return;
  watching = view.you === null;
  show(view);
  await botMoves();
}

// ------------------------------------------------------------------------------ analysis, records

async function analyse() {
  const view = shown();
  if (!view) return;
  $("#analyze").disabled = true;
  say("Analysing…");
  try {
    const body = { position: view.position, simulations: Number($("#simulations").value) || 400 };
    if (mode === "play" && game && game.you !== null) {
      const bot = game.players[game.you === "P0" ? 1 : 0];
      if (bot.startsWith("nn:")) body.player = bot;
    }
    const result = await api("POST", "/api/analyze", body);
    analysis = { ...result, position: view.position, asked: body.simulations };
    say("");
  } catch (e) {
    say(e.message);
  } finally {
    $("#analyze").disabled = false;
  }
  render();
}

async function loadRecord(index) {
  const file = $("#record-file").files[0];
  const text = record && record.text && !file ? record.text : file ? await file.text() : null;
  if (text === null) return;
  try {
    const view = await api("POST", `/api/record?game=${index}`, text);
    record = { ...view, text };
    mode = "record";
    frame = 0;
    watching = false;
    analysis = null;
    $("#record-game").value = String(view.game + 1);
    $("#record-games").textContent = `of ${view.games}`;
    $("#record-panel").open = true;
    say("");
    render();
  } catch (e) {
    say(e.message);
  }
}

function step(to) {
  if (mode !== "record") return;
  frame = Math.max(0, Math.min(record.moves.length, to));
  render();
}

// ------------------------------------------------------------------------------ wiring

function wire() {
  $("#setup").addEventListener("submit", newGame);
  $("#colour").addEventListener("change", () => {
    const watch = $("#colour").value === "watch";
    $("#opponent-b-label").hidden = !watch;
    $("#opponent-label").textContent = watch ? "P0 bot" : "Opponent";
  });
  $("#opponent-b-label").hidden = true;
  $("#move").addEventListener("keydown", async (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    const input = $("#move");
    const text = input.value.trim();
    if (!text) return;
    if (await playMove(text)) input.value = "";
  });
  $("#undo").addEventListener("click", async () => {
    if (!game) return;
    watching = false;
    const view = await request("POST", `/api/games/${game.id}/undo`);
    if (view) show(view);
  });
  $("#resign").addEventListener("click", async () => {
    if (!game) return;
    watching = false;
    const view = await request("POST", `/api/games/${game.id}/resign`);
    if (view) show(view);
  });
  $("#pass").addEventListener("click", () => playMove("pass"));
  $("#pause").addEventListener("click", async () => {
    watching = !watching;
    drawStatus();
    if (watching) await botMoves();
  });
  $("#analyze").addEventListener("click", analyse);
  $("#record-file").addEventListener("change", () => {
    record = null;
    loadRecord(0);
  });
  $("#record-game").addEventListener("change", () => {
    const index = Math.max(0, Number($("#record-game").value) - 1);
    if (!record || record.game !== index) loadRecord(index);
  });
  $("#record-first").addEventListener("click", () => step(0));
  $("#record-prev").addEventListener("click", () => step(frame - 1));
  $("#record-next").addEventListener("click", () => step(frame + 1));
  $("#record-last").addEventListener("click", () => step(record ? record.moves.length : 0));
  $("#record-close").addEventListener("click", () => {
    mode = "play";
    analysis = null;
    render();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      pick = {};
      render();
    }
    if (mode === "record" && e.target === document.body) {
      if (e.key === "ArrowRight") step(frame + 1);
      if (e.key === "ArrowLeft") step(frame - 1);
    }
  });
}

async function start() {
  wire();
  try {
    // The boards, the players and the page's limits are the server's (GET /api/info).
    const info = await api("GET", "/api/info");
    const boards = $("#board");
    for (const rings of info.boards) {
      const o = document.createElement("option");
      o.value = o.textContent = String(rings);
      boards.appendChild(o);
    }
    const list = $("#players");
    for (const p of [...info.players, ...info.suggested]) {
      const o = document.createElement("option");
      o.value = p;
      list.appendChild(o);
    }
    $("#opponent").value = info.default_opponent;
    $("#simulations").max = String(info.max_page_simulations);
  } catch (e) {
    say(e.message);
  }
  await newGame();
}

start();
