#!/usr/bin/env node
// A Card Arena bot in Node.js: loads proto/ at run time, holds one session
// stream, and answers every Act of all three games from the typed messages.
//
//   node bot.js --referee 127.0.0.1:50051 --token TOKEN [--capacity 4]
//
// It reconnects when the stream drops (at once when the referee asks it to,
// with back-off otherwise) and stops on SIGINT or SIGTERM.
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTO_ROOT = path.resolve(__dirname, "..", "..", "proto");
const CLIENT = "card-arena-node-example/1";

// proto-loader's defaults bite: camelCase field names, zero values left out
// (so seat 0 would be undefined), enums as numbers and int64 as Long objects.
// These options keep the .proto names, fill every default, and give enums
// and int64 values as strings; `oneofs` adds a field naming the set member.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

function parseArgs(argv) {
  const args = { referee: "127.0.0.1:50051", token: "", capacity: 4 };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args) || i + 1 >= argv.length) {
      throw new Error(`usage: bot.js --referee HOST:PORT --token TOKEN [--capacity N] (at ${argv[i]})`);
    }
    args[key] = key === "capacity" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.token) {
    throw new Error("a bot needs --token (from `arena bot register`)");
  }
  return args;
}

function loadApi() {
  const definition = protoLoader.loadSync("cardarena_api/v1/arena.proto", LOADER_OPTIONS);
  return grpc.loadPackageDefinition(definition).cardarena_api.v1;
}

// ---------------------------------------------------------------- choices

function indexOf(legal, test) {
  const found = legal.findIndex(test);
  return found >= 0 ? found : null;
}

function randomIndex(legal) {
  return Math.floor(Math.random() * legal.length);
}

// Goodge: bid the lowest bid once when holding the Crown, else pass; name the
// suit we hold most of; discard and play at random among the legal cards.
function goodge(act) {
  const view = act.observation.goodge;
  const legal = act.legal;
  if (view.phase === "bid") {
    const crown = view.hand.some((card) => card.crown);
    const bids = legal.filter((action) => action.goodge.kind === "bid");
    if (crown && bids.length > 0 && view.bids.every((bid) => bid.seat !== act.seat)) {
      const lowest = Math.min(...bids.map((action) => action.goodge.bid));
      return indexOf(legal, (action) => action.goodge.bid === lowest && action.goodge.kind === "bid");
    }
    return indexOf(legal, (action) => action.goodge.kind === "pass_bid") ?? 0;
  }
  if (view.phase === "trump") {
    const counts = {};
    for (const card of view.hand) {
      if (!card.crown) counts[card.suit] = (counts[card.suit] || 0) + 1;
    }
    const best = Object.keys(counts).sort((a, b) => counts[b] - counts[a])[0];
    return indexOf(legal, (action) => action.goodge.trump === best) ?? 0;
  }
  return randomIndex(legal);
}

// Golden 10: play the lowest card allowed, to take as few tricks as may be.
function golden10(act) {
  let lowest = 0;
  act.legal.forEach((action, index) => {
    if (action.golden10.card.rank < act.legal[lowest].golden10.card.rank) lowest = index;
  });
  return lowest;
}

// Goof: play a card onto a pile when one may, else turn the stock, else wait.
function goof(act) {
  return (
    indexOf(act.legal, (action) => action.goof.kind === "play") ??
    indexOf(act.legal, (action) => action.goof.kind === "turn") ??
    0
  );
}

const CHOOSERS = { goodge, golden10, goof };

function choose(act) {
  return CHOOSERS[act.game](act);
}

// ---------------------------------------------------------------- session

function describeResult(result, botId) {
  const entries = result.entries && result.entries.length > 0 ? result.entries : null;
  const mine = entries ? entries.filter((entry) => entry.bot_id === botId) : [];
  if (mine.length === 0) return `scores ${result.scores.join(", ")}`;
  return mine
    .map((entry) => {
      const forfeit = entry.forfeited ? `, forfeited (${entry.forfeit_reason})` : "";
      return `rank ${entry.rank}, score ${entry.score}, ${entry.strikes} strikes${forfeit}`;
    })
    .join("; ");
}

function session(api, args, state) {
  return new Promise((resolve) => {
    const client = new api.BotService(args.referee, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.add("authorization", `Bearer ${args.token}`);
    const call = client.Session(metadata);
    state.call = call;
    let outcome = "dropped";
    call.write({ hello: { capacity: args.capacity, client: CLIENT } });
    call.on("data", (message) => {
      switch (message.kind) {
        case "welcome":
          state.botId = message.welcome.bot_id;
          console.log(`session ${message.welcome.session_id} open for bot ${state.botId}`);
          break;
        case "act": {
          const act = message.act;
          const index = choose(act);
          call.write({ answer: { request_id: act.request_id, index } });
          break;
        }
        case "strike":
          console.log(`strike in match ${message.strike.match_id}: ${message.strike.reason}`);
          break;
        case "forfeit":
          console.log(`forfeited match ${message.forfeit.match_id}: ${message.forfeit.reason}`);
          break;
        case "match_end":
          console.log(
            `match ${message.match_end.match_id} ended: ` +
              describeResult(message.match_end.result, state.botId),
          );
          break;
        case "error":
          console.log(`referee: ${message.error.message}`);
          break;
        case "reconnect":
          console.log(`referee asks to reconnect: ${message.reconnect.reason}`);
          outcome = "reconnect";
          call.cancel();
          break;
        default:
          break;
      }
    });
    call.on("error", (error) => {
      if (error.code === grpc.status.UNAUTHENTICATED) outcome = "unauthenticated";
      else if (error.code !== grpc.status.CANCELLED) console.log(`session: ${error.details}`);
    });
    call.on("close", () => {
      client.close();
      resolve(outcome);
    });
  });
}

async function main() {
  const args = parseArgs(process.argv);
  const api = loadApi();
  const state = { stopped: false, call: null, botId: "" };
  const stop = () => {
    state.stopped = true;
    if (state.call) state.call.cancel();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  let backoffMs = 100;
  while (!state.stopped) {
    const outcome = await session(api, args, state);
    if (outcome === "unauthenticated") {
      console.error("the referee refused the token");
      process.exitCode = 2;
      return;
    }
    if (state.stopped) break;
    if (outcome === "reconnect") {
      backoffMs = 100;
      continue;
    }
    console.log(`session ended; reconnecting to ${args.referee} in ${backoffMs} ms`);
    await new Promise((wake) => setTimeout(wake, backoffMs));
    backoffMs = Math.min(backoffMs * 2, 5000);
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 2;
});
