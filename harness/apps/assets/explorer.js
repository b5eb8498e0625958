// The ring explorer: a ring you can click, built from the same recipe as the harness's.
// Data comes from the page (#explorer-data): servers, points per unit weight, hash, point
// name template, sample keys, and optionally the ring's positions and owners precomputed.
// Conventions (harness.ring): the owner of key hash h is the first point >= h, wrapping;
// of points sharing a position the lowest server index keeps it.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("explorer-data").textContent);
  const hash = RingHashes[data.hash];
  const encoder = new TextEncoder();
  const SPACE = 4294967296;
  const MAX_DRAWN = 3000;
  const state = {servers: data.servers.slice(), k: data.points_per_weight, ring: null,
                 nextServer: data.servers.length + 1, last: null};

  function hashText(text) { return hash(encoder.encode(text)); }

  function pointName(server, j) {
    return data.point_name.split("{server}").join(server).split("{j}").join(String(j));
  }

  function pointsFor(weight) { return Math.max(1, Math.round(state.k * weight)); }

  // A server's points depend only on its name and count: hash them once (BLAKE2b in
  // BigInt is slow), so adding a server hashes only the new server's points.
  const pointCache = new Map();

  function serverPoints(name, count) {
    const key = name + "\u0000" + count;
    let points = pointCache.get(key);
    if (!points) {
      points = new Uint32Array(count);
      for (let j = 0; j < count; j++) points[j] = hashText(pointName(name, j));
      pointCache.set(key, points);
    }
    return points;
  }

  function buildRing(servers, cached) {
    let positions, owners;
    if (cached) {
      positions = cached.positions; owners = cached.owners;
    } else {
      const list = [];
      servers.forEach(function (server, index) {
        serverPoints(server.name, pointsFor(server.weight)).forEach(function (position) {
          list.push([position, index]);
        });
      });
      list.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      const kept = list.filter(function (p, i) { return i === 0 || p[0] !== list[i - 1][0]; });
      positions = Uint32Array.from(kept, function (p) { return p[0]; });
      owners = Uint16Array.from(kept, function (p) { return p[1]; });
    }
    const shares = new Float64Array(servers.length);
    for (let i = 0; i < positions.length; i++) {
      const previous = i === 0 ? positions[positions.length - 1] - SPACE : positions[i - 1];
      shares[owners[i]] += (positions[i] - previous) / SPACE;
    }
    return {servers: servers, positions: positions, owners: owners, shares: shares};
  }

  function ownerIndex(ring, keyHash) {
    let low = 0, high = ring.positions.length;
    while (low < high) {  // first position >= keyHash
      const mid = (low + high) >>> 1;
      if (ring.positions[mid] < keyHash) low = mid + 1; else high = mid;
    }
    return low === ring.positions.length ? 0 : low;
  }

  function lookupIn(ring, keyHash) { return ring.servers[ring.owners[ownerIndex(ring, keyHash)]].name; }

  const sampleHashes = data.sample_keys.map(hashText);

  function owners(ring) { return sampleHashes.map(function (h) { return lookupIn(ring, h); }); }

  function modN(servers) {
    return sampleHashes.map(function (h) { return servers[h % servers.length].name; });
  }

  function changed(before, after) {
    let moved = 0;
    for (let i = 0; i < before.length; i++) if (before[i] !== after[i]) moved += 1;
    return moved;
  }

  // --- drawing ---------------------------------------------------------------------
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("ring");
  const R = 200, C = 230;

  // Up to 64 servers each get their own colour. Hues step by the golden angle, so
  // neighbouring servers (and any few in a row) are far apart on the colour wheel; four
  // lightness and saturation levels, taken in turn, separate the hues that come close
  // again further on. Beyond 64 servers, consecutive servers share a colour in 64 groups
  // (the list says which group), since more hues than that cannot be told apart.
  const COLOURS = 64;
  const LEVELS = [[70, 45], [85, 32], [55, 62], [90, 40]];
  function colourGroup(index, count) {
    return count <= COLOURS ? index : Math.floor(index * COLOURS / count);
  }
  function colour(index, count) {
    const group = colourGroup(index, count);
    const level = LEVELS[group % LEVELS.length];
    return "hsl(" + ((group * 137.508) % 360).toFixed(1) + ", " + level[0] + "%, "
      + level[1] + "%)";
  }

  function at(position, radius) {
    const angle = 2 * Math.PI * position / SPACE - Math.PI / 2;
    return [C + radius * Math.cos(angle), C + radius * Math.sin(angle)];
  }

  function element(name, attributes) {
    const node = document.createElementNS(svgNS, name);
    Object.keys(attributes).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    return node;
  }

  function draw() {
    const ring = state.ring;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.appendChild(element("circle", {cx: C, cy: C, r: R, fill: "none",
                                       stroke: "currentColor", "stroke-opacity": 0.3}));
    const total = ring.positions.length;
    const step = Math.max(1, Math.ceil(total / MAX_DRAWN));
    for (let i = 0; i < total; i += step) {
      const inner = at(ring.positions[i], R - 9), outer = at(ring.positions[i], R + 9);
      svg.appendChild(element("line", {x1: inner[0], y1: inner[1], x2: outer[0], y2: outer[1],
        stroke: colour(ring.owners[i], ring.servers.length), "stroke-width": 2,
        "class": "point"}));
    }
    document.getElementById("drawn").textContent = step > 1
      ? "Drawn sampled: " + Math.ceil(total / step).toLocaleString() + " of "
        + total.toLocaleString() + " points (every " + step + "th)."
      : "All " + total.toLocaleString() + " points drawn.";
    showKey();
    drawShares();
    const list = document.getElementById("servers");
    list.textContent = "";
    ring.servers.forEach(function (server, index) {
      const item = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = colour(index, ring.servers.length);
      item.appendChild(swatch);
      const grouped = ring.servers.length > COLOURS
        ? ", colour group " + (colourGroup(index, ring.servers.length) + 1) : "";
      item.appendChild(document.createTextNode(server.name + " (weight " + server.weight + ", "
        + (100 * ring.shares[index]).toFixed(2) + "%" + grouped + ")"));
      list.appendChild(item);
    });
  }

  function showKey() {
    const ring = state.ring;
    const key = document.getElementById("key").value;
    const keyHash = hashText(key);
    const index = ownerIndex(ring, keyHash);
    const owner = ring.servers[ring.owners[index]].name;
    const previous = ring.positions[(index + ring.positions.length - 1) % ring.positions.length];
    const end = ring.positions[index];
    const old = document.getElementById("arc");
    if (old) old.remove();
    const start = at(previous, R), stop = at(end, R);
    let sweep = end - previous;
    if (sweep <= 0) sweep += SPACE;
    const large = sweep > SPACE / 2 ? 1 : 0;
    const arc = element("path", {id: "arc", d: "M " + start[0] + " " + start[1] + " A " + R + " "
      + R + " 0 " + large + " 1 " + stop[0] + " " + stop[1], fill: "none",
      stroke: colour(ring.owners[index], ring.servers.length), "stroke-width": 10,
      "stroke-opacity": 0.45});
    svg.appendChild(arc);
    const dot = at(keyHash, R);
    const oldDot = document.getElementById("keydot");
    if (oldDot) oldDot.remove();
    svg.appendChild(element("circle", {id: "keydot", cx: dot[0], cy: dot[1], r: 5,
                                       fill: "currentColor"}));
    document.getElementById("owner").textContent = owner;
    document.getElementById("modn").textContent =
      ring.servers[keyHash % ring.servers.length].name + " (hash mod " + ring.servers.length + ")";
    document.getElementById("keyhash").textContent = keyHash.toLocaleString();
  }

  function drawShares() {
    const ring = state.ring;
    const total = ring.servers.reduce(function (s, x) { return s + x.weight; }, 0);
    const rows = ring.servers.map(function (server, i) {
      return {server: server.name, share: ring.shares[i], expected: server.weight / total};
    });
    const spec = JSON.parse(JSON.stringify(data.shares_spec));
    spec.data = {values: rows};
    spec.layer[0].encoding.color = {field: "server", type: "nominal", legend: null,
      scale: {domain: rows.map(function (r) { return r.server; }),
              range: rows.map(function (r, i) { return colour(i, rows.length); })}};
    if (window.vegaEmbed) {
      const dark = window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches;
      window.sharesDrawn = window.vegaEmbed("#shares", spec,
        {actions: false, renderer: "svg", theme: dark ? "dark" : undefined});
    }
  }

  function report(text) { document.getElementById("last").textContent = text; }

  function change(servers, describe, cached) {
    const before = owners(state.ring), beforeModN = modN(state.ring.servers);
    state.ring = buildRing(servers, cached);
    state.servers = servers;
    const ring = changed(before, owners(state.ring));
    const modn = changed(beforeModN, modN(servers));
    state.last = {ring: ring, modN: modn, keys: sampleHashes.length};
    report(describe + ": " + ring.toLocaleString() + " of " + sampleHashes.length.toLocaleString()
      + " sample keys changed owner on the ring (" + (100 * ring / sampleHashes.length).toFixed(1)
      + "%); with hash mod N, " + modn.toLocaleString() + " ("
      + (100 * modn / sampleHashes.length).toFixed(1) + "%).");
    draw();
    return state.last;
  }

  function addServer(name, weight) {
    let chosen = name;
    while (!chosen || state.servers.some(function (s) { return s.name === chosen; })) {
      chosen = data.new_server_prefix + state.nextServer;
      state.nextServer += 1;
    }
    return change(state.servers.concat([{name: chosen, weight: weight || 1}]), "Added " + chosen);
  }

  function removeServer(name) {
    if (state.servers.length <= 1) return null;
    const target = name || state.servers[state.servers.length - 1].name;
    const remaining = state.servers.filter(function (s) { return s.name !== target; });
    if (remaining.length === state.servers.length) return null;
    return change(remaining, "Removed " + target);
  }

  function setPoints(k) {
    state.k = Math.max(1, Math.floor(k));
    document.getElementById("points").value = state.k;
    return change(state.servers.slice(), "Points per unit weight set to " + state.k);
  }

  document.getElementById("add").addEventListener("click", function () { addServer(); });
  document.getElementById("remove").addEventListener("click", function () { removeServer(); });
  document.getElementById("points").addEventListener("change", function (e) {
    setPoints(Number(e.target.value));
  });
  document.getElementById("key").addEventListener("input", showKey);

  let cached = null;
  if (data.positions) {
    const decode = function (text, Type) {
      const raw = atob(text), bytes = new Uint8Array(raw.length);
      for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
      return new Type(bytes.buffer);
    };
    cached = {positions: decode(data.positions, Uint32Array), owners: decode(data.owners, Uint16Array)};
  }
  state.ring = buildRing(state.servers, cached);
  draw();

  window.ringExplorer = {
    lookup: function (key) { return lookupIn(state.ring, hashText(String(key))); },
    hash: hashText,
    addServer: addServer,
    removeServer: removeServer,
    setPoints: setPoints,
    servers: function () { return state.servers.map(function (s) { return s.name; }); },
    entries: function () { return state.ring.positions.length; },
    colours: function () {
      return state.ring.servers.map(function (s, i) {
        return colour(i, state.ring.servers.length);
      });
    },
    last: function () { return state.last; },
  };
})();
