"""A scriptable, deliberately misbehaving-on-demand MCP server over stdio or HTTP.

Use it to test an MCP host or client against the eras, edge cases and hostile
behavior a real server may show. By default it speaks newline-delimited
JSON-RPC on stdin/stdout (one UTF-8 JSON value per line); ``--transport http``
serves Streamable HTTP and the old HTTP+SSE transport instead (see "HTTP mode"
below). It uses only the standard library (DPoP checks in "OAuth protection"
also need PyJWT) and never imports the official SDK or the rest of mcpclient::

    python -m mcpclient.testing.server --era modern|legacy|dual [knobs]
    python -m mcpclient.testing.server --transport http --port 0 [--host H] [knobs]

Eras (``--era``, default ``dual``)
----------------------------------
``legacy``
    ``initialize`` handshake (protocol versions 2024-11-05, 2025-03-26,
    2025-06-18, 2025-11-25; an unknown requested version is answered with the
    latest). Requests other than ``ping`` before ``initialize`` get -32600;
    ``server/discover`` gets -32601. Batches (arrays) are accepted only when
    2025-03-26 was negotiated and are answered with an array. ``ping`` answers
    ``{}``; ``logging/setLevel`` sets the threshold for ``notifications/message``.
    ``resources/subscribe``/``unsubscribe`` are supported; ``mutate_catalog``
    sends unsolicited ``notifications/<family>/list_changed`` and
    ``notifications/resources/updated``. Resource-not-found is -32002.
``modern`` (2026-07-28)
    No handshake: ``initialize``, ``ping`` and ``logging/setLevel`` are -32601.
    Every request needs ``params._meta["io.modelcontextprotocol/protocolVersion"]``
    and ``params._meta["io.modelcontextprotocol/clientCapabilities"]`` (missing:
    -32602); a version outside ``--modern-versions`` gets -32022 with
    ``data: {"supported": [...], "requested": v}``. ``server/discover`` answers
    ``{supportedVersions, capabilities, instructions?, ttlMs, cacheScope}``.
    Every result carries ``resultType: "complete"`` and
    ``_meta["io.modelcontextprotocol/serverInfo"]``; list results and
    ``resources/read`` carry ``ttlMs``/``cacheScope``. Log notifications are sent
    only when a request's ``_meta["io.modelcontextprotocol/logLevel"]`` allows.
    ``subscriptions/listen`` is acknowledged with
    ``notifications/subscriptions/acknowledged`` (capability-filtered) and stays
    open until cancelled; ``mutate_catalog`` notifies the matching listen streams.
    Resource-not-found is -32602.
``dual``
    Legacy semantics for ``initialize`` and for requests without the modern
    ``_meta`` protocol version; modern semantics for requests carrying it (and
    always for ``server/discover`` and ``subscriptions/listen``).

Catalog
-------
Tools: ``echo`` {message}, ``add`` {a, b} (outputSchema + structuredContent
``{"sum": ...}``, both omitted before 2025-06-18), ``slow`` {seconds},
``progress`` {steps=3, interval=0.05} (``notifications/progress`` only when the
request has ``_meta.progressToken``), ``fail`` {message?} (``isError: true``),
``log`` {message, level="info", logger?, data?} (one ``notifications/message``,
subject to the log level; its ``data`` is ``data``, any JSON value, when given, else
``message``), ``hostile`` {action, ...} (below), ``mutate_catalog`` {...}
(runtime catalog and list controls, below). Built-in arguments are checked
against their input schema; a mismatch is an ``isError`` result. An unlisted
tool is -32602. Prompt ``greet`` (argument ``name``, required); resource
``test://static/hello``; template ``test://items/{id}``; ``completion/complete``
completes ``greet``'s ``name`` and the template's ``id``.

The four list methods, ``tools/list``, ``prompts/list``, ``resources/list`` and
``resources/templates/list``, are the families ``tools``, ``prompts``,
``resources`` and ``resourceTemplates`` (a FAMILY argument also accepts
``templates`` or ``resources/templates`` for the last). Every list knob below
works in every era; modern list results always carry ``ttlMs``/``cacheScope``,
whatever the knob.

Generated items (``--item-count``, ``--endless-pages``), numbered from 0 with
at least four digits: tools ``t0000``… (input schema ``{"type":
"object"}``, calls echo their arguments like any non-built-in tool), prompts
``p0000``… (no arguments), resources ``test://gen/0000``… (named ``r0000``…,
text ``Contents of <uri>``), templates ``test://gen/0000/{id}``… (named
``rt0000``…).

Flags
-----
``--era {modern,legacy,dual}``
    Protocol era (default ``dual``).
``--capabilities LIST``
    Comma-separated subset of ``tools,prompts,resources,logging,completions`` to
    advertise (default all; empty string for none). Methods of an unadvertised
    capability answer -32601.
``--server-version V``
    ``serverInfo.version`` (default ``1.0.0``; the name is ``mcpclient-testing``).
``--server-version-file PATH``
    Read ``serverInfo.version`` from PATH (its text, surrounding whitespace
    stripped) at startup; overrides ``--server-version``. A test can change the
    file and kill the server to simulate an upgrade across a reconnect.
``--instructions TEXT``
    Include ``instructions`` in the initialize/discover result.
``--legacy-versions LIST`` / ``--modern-versions LIST``
    Comma-separated protocol versions the server accepts in each era (defaults:
    the four legacy versions; ``2026-07-28``).
``--page-size N``
    Split every list into pages of N with opaque cursors (0 = one page). A cursor
    the server did not issue gets -32602.
``--item-count FAMILY=N``
    Append N generated items (above) to FAMILY's listing, after the defaults or
    the ``--catalog`` entries (so the built-in tools, ``mutate_catalog`` among
    them, stay listed; for exactly N items give the family as ``[]`` in a
    ``--catalog`` file). Paged by ``--page-size`` like any listing. Repeatable,
    one family each (the last count for a family wins).
``--cursor-loop FAMILY``
    FAMILY's pagination never ends: the first page (``--page-size`` items, or
    the whole listing with page size 0) always carries a ``nextCursor`` C, and a
    request with C answers the second page (the next ``--page-size`` items;
    empty with page size 0) with ``nextCursor`` C again, however often it is
    asked: a repeated cursor.
``--endless-pages FAMILY``
    FAMILY pages one item at a time (``--page-size`` ignored), forever: page k
    (from 0) holds the listing's item k, then, past the listing, generated item k;
    every page carries a fresh ``nextCursor``. Names stay unique (unless a
    ``--catalog`` listing uses generated names). Generated items past the
    listing can be called/got/read too. Takes precedence over ``--cursor-loop``.
``--huge-cursor FAMILY``
    The first page's ``nextCursor`` is exactly 5000 bytes (a valid cursor: it
    leads to the second page, which is empty, ending the list, when the listing
    fits on the first page). Combined with ``--cursor-loop``, the loop repeats
    that 5000-byte cursor.
    These three flags are repeatable and take comma-separated families
    (``--cursor-loop tools,prompts``).
``--list-delay SECONDS``
    Every list request waits SECONDS before it is answered (default 0), on its
    own thread, so other requests, ``mutate_catalog`` notifications and
    ``notifications/cancelled`` (which drops the answer) are handled meanwhile.
    The page is computed after the wait. Settable at runtime (``list_delay``).
``--missing-list FAMILY``
    FAMILY's list method answers the JSON-RPC error ``{"code": -32601,
    "message": "Method not found", "data": "<method>"}`` though its capability
    is advertised (``resourceTemplates``: what a low-level Python SDK server
    without a templates handler does). Repeatable and comma-separated, like
    the pagination flags. Settable at runtime (``missing_lists``).
``--reject-versions N``
    Refuse the first N requests that name a protocol version, as an older
    instance met once in a rolling deploy would, though the version is
    supported: a modern request (valid envelope, ``server/discover`` included)
    gets -32022 with ``data: {"supported": <--modern-versions>, "requested":
    v}``; ``initialize`` gets -32602 "Unsupported protocol version" with
    ``data: {"supported": <--legacy-versions>, "requested": v}`` (the 2025-11-25
    spec's example) and no session. Counted per process (in HTTP mode across
    every session). Settable at runtime (``reject_versions``).
``--catalog FILE``
    JSON object with any of ``tools``, ``prompts``, ``resources``,
    ``resourceTemplates`` (lists of raw definitions, passed through verbatim);
    each present key replaces that family's default listing. A ``tools`` entry
    may be the bare name of a built-in tool. Listed tools that are not built-in
    answer with a text echo of their arguments (JSON, sorted keys).
``--ttl-ms N``
    ``ttlMs`` on modern discover and read results and on every page of every
    modern list result (default 0; ``cacheScope`` is always ``public``).
``--log-level LEVEL``
    Legacy log threshold until ``logging/setLevel`` (default ``debug``).
``--exit-on-discover``
    Exit (status 1) upon receiving ``server/discover``.
``--silent-discover``
    Never answer ``server/discover``.
``--no-initialize-answer``
    Never answer ``initialize`` (the server stays uninitialized).
``--exit-after-initialize``
    Exit (status 0) right after answering ``initialize``.
``--startup-delay SECONDS``
    Sleep before reading stdin.
``--exit-at-startup-file PATH``
    If PATH exists at startup, append a line ``exited <pid>`` to it (so a test
    can count the starts) and exit at once (status 1, a line on stderr), before
    anything else; otherwise run normally. A test creates the file and kills the
    server to make every restart fail, and removes it to let them succeed.
``--stderr-flood BYTES``
    Write BYTES of text to stderr at startup, before reading stdin (blocks if
    the client does not drain stderr).
``--ignore-stdin-eof``
    Ignore SIGTERM and keep running after stdin closes (only SIGKILL ends it).
``--spawn-grandchild``
    Start ``sleep 300`` in the server's process group, inheriting its stdio, and
    print ``grandchild-pid: N`` on stderr.
``--transport {stdio,http}``
    ``stdio`` (default) or ``http`` (see "HTTP mode").
``--host HOST`` / ``--port N``
    HTTP mode: the address to listen on (defaults ``127.0.0.1`` and 0, a free
    port; an IPv6 host such as ``::1`` works too).
``--session-404-storm N``
    HTTP mode: the first N HTTP requests (any path or method) are answered 404
    with ``{"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message":
    "Session not found"}}``, then requests are served normally.
``--redirect-to URL``
    HTTP mode: every POST (any path) is answered ``307 Temporary Redirect`` with
    ``Location: URL`` and an empty body; GET and DELETE are served normally.
``--endpoint-url URL``
    HTTP mode: the ``endpoint`` event of ``GET /sse`` names URL verbatim (e.g.
    another origin) instead of ``/messages?session=<id>``.
``--get-status CODE``
    HTTP mode: every ``GET /mcp`` (stream or resumption, any era) is answered
    ``CODE`` with its reason phrase as a ``text/plain`` body, as by a
    framework with only a POST route (404) or a server that refuses streams.
``--no-session-id``
    HTTP mode, with ``--era legacy``: sessions without ``Mcp-Session-Id``. No
    answer carries the header, and a request without one belongs to the latest
    session ``initialize`` created (one client at a time).
``--mrtr``
    Also list the ``ask`` tool, the prompt ``ask_prompt`` and the resource
    ``test://ask`` (see "Asking the client" below).
``--record FILE``
    Append every inbound message to FILE as one JSON line (undecodable frames as
    ``{"_invalid": "<text>"}``, a batch as one array), flushed before the message
    is handled. Every request is recorded, list requests included (also those
    that fail, are delayed or are cancelled), so a test can count a client's
    list requests per method and see the cursors it sent. In HTTP mode the
    lines are HTTP requests instead (see "HTTP mode").

Asking the client (``--mrtr``)
------------------------------
``ask`` {inputs: [{key, method, params?}], rounds=1, state="ask-state", forever=false}
    Modern era: answers ``{"resultType": "input_required", "inputRequests":
    {key: {method, params}}, "requestState": "r<N>:<state>"}`` (round N from
    1) until a retry carries ``inputResponses`` holding every key (a retry
    missing one is asked round N again), for ``rounds`` rounds; then the text
    result is the JSON ``{"inputResponses": <as received in the last retry>,
    "requestState": <as received>, "rounds": N}`` (sorted keys). ``state:
    null`` sends no ``requestState`` (one round: any retry holding every key
    completes). An empty ``inputs`` sends only ``requestState`` (a polling
    round). ``forever: true`` answers ``input_required`` to every retry. The
    requests themselves (new ids, echoed state, response shapes) are in the
    ``--record`` file. Legacy era: each input is sent as a server-to-client
    request, ``rounds`` times, and the text result is ``{"inputResponses":
    {key: {"result": ...} | {"error": ...}}, "rounds": rounds}`` (the last
    round's answers).
Prompt ``ask_prompt`` {state?} and resource ``test://ask``
    Ask for input key ``name`` (``elicitation/create``, a form with one
    required string ``name``) exactly as ``ask`` does (``requestState``
    ``r1:<state>``, default state ``ask-state``); then answer the prompt
    message / resource text ``Hello, <name>!`` (``Hello, stranger!`` unless
    the answer was ``accept`` with a string ``name``).
A ``script_result`` whose result is an ``input_required`` object makes any
other method answer one (which a client must refuse).

Runtime controls (``tools/call`` of ``mutate_catalog``)
-------------------------------------------------------
Arguments, all optional and combinable; the result is a JSON text report of what
was done (``isError`` and no change at all when ``set_tools`` or ``storm`` is
invalid). They apply in this order, so a list failure or delay scripted in the
same call is already in force when the client reacts to the notifications:

``fail_lists`` {integer >= -1}
    The next N list requests (any family, any era) answer the JSON-RPC error
    ``{"code": -32603, "message": "induced failure"}`` instead of a page; -1
    makes every list request fail until a later ``fail_lists: 0`` (0 resets).
    Counted when a request arrives; a failing request still waits the list
    delay.
``list_delay`` {seconds >= 0}
    Replace the ``--list-delay`` for later list requests.
``missing_lists`` [FAMILY, ...]
    Replace the ``--missing-list`` families (``[]``: every list method answers
    again).
``reject_versions`` {count=1, supported?, method?}
    Refuse the next ``count`` version-naming requests (of ``method`` only, when
    given, e.g. ``"tools/call"``) as ``--reject-versions`` does, after this
    call's own answer, naming ``supported`` (a list of strings; default the
    era's versions) in the error's data. ``count: 0`` cancels what is pending.
``set_tools`` [tool, ...]
    Replace the whole tool listing with these raw objects, kept verbatim however
    malformed (a bare string names a built-in tool, as in ``--catalog``; an
    unknown name is an ``isError`` result). Include ``"mutate_catalog"`` to keep
    these controls callable. Always notifies tools list_changed.
``add`` {name} / ``remove`` {name}
    List a tool (the built-in definition if ``name`` is one, otherwise an echo
    tool with schema ``{"type": "object"}``) / unlist it; tools list_changed is
    notified once for ``set_tools``/``add``/``remove`` when something changed.
``touch`` {uri}
    Send ``notifications/resources/updated`` for ``uri`` to its subscribers.
``notify`` {"tools"|"prompts"|"resources"}
    Send that family's list_changed notification, with no change.
``storm`` {family: "tools"|"prompts"|"resources", count=100}
    Send ``count`` list_changed notifications of ``family`` back to back.

A list_changed notification goes, in legacy, as a plain notification once
initialized (only when the family is advertised); in modern, to every open
``subscriptions/listen`` stream that asked for ``<family>ListChanged``
(with that stream's subscription id); in ``dual``, both.

Hostile actions (``tools/call`` of ``hostile`` with ``{"action": ..., ...}``)
---------------------------------------------------------------------------
``oversized_line`` {bytes=17825792, id_at="head"}
    Write one line of exactly ``bytes`` bytes (plus the newline) holding this
    call's JSON response; the real answer is never sent. ``id_at`` places its
    id: ``head`` (``{"jsonrpc":"2.0","id":N,"result":{...``, cut off inside the
    text), ``tail`` (``{"jsonrpc":"2.0","result":{...},"id":N}``, whole JSON)
    or ``none`` (``...},"id":N,"_meta":{}}``: in the middle, neither first nor
    last).
``garbage_line``
    Write ``this is not json``, then answer.
``invalid_utf8``
    Write a ``notifications/message`` line with invalid UTF-8 inside a JSON
    string, then answer.
``deep_json`` {depth=100000}
    Write ``[[[…]]]`` nested ``depth`` deep, then answer.
``exit`` {code=1, partial=false}
    Exit the process at once, mid-call. With ``partial: true``, first write
    the beginning of this call's JSON response without its newline (a
    half-written frame, then EOF).
``never_answer``
    Never answer this request.
``ignore_cancel`` {seconds=1}
    Sleep, ignoring ``notifications/cancelled``, then answer anyway.
``progress_forever`` {interval=0.1}
    Every ``interval``: ``notifications/progress`` (with the request's token) or,
    without a token, an unfiltered ``notifications/message``; never answers;
    stops when cancelled.
``duplicate_response``
    Send the response twice.
``unknown_id`` {id=987654321}
    Send a response with an id nobody asked for, then the real answer.
``stderr_flood`` {bytes=1048576}
    Write ``bytes`` of text to stderr, then answer.
``close_stdout``
    Close stdout; the process lives on until stdin closes.
``notification_flood`` {count=1000, kind="log"|"progress"|"list_changed"}
    Send ``count`` notifications back to back on the call's channel (progress
    uses the request's token, or ``"flood"``; logs are unfiltered; list_changed
    is the tools one, unsolicited and without a subscription id: for
    era-correct list_changed storms use ``mutate_catalog``'s ``storm``), then
    answer.
``server_request`` {method, params?, timeout?}
    Send a server-to-client request (ids 1, 2, ... of the server's own
    sequence; any era, though only legacy clients should accept one) and answer
    with the client's response as JSON text ``{"result": ...}`` or
    ``{"error": ...}`` (``isError`` for an error; also on timeout).
``result`` {result}
    Answer this call with exactly ``result`` as the JSON-RPC ``result`` member
    (any JSON value, kept verbatim: no ``resultType`` or ``serverInfo`` is added
    in the modern era), e.g. a content list that is not a list, oversized or
    unknown content items, or ``structuredContent`` that fails the tool's
    output schema (list ``hostile`` with an ``outputSchema`` via ``--catalog``).
``script_result`` {method, result}
    Queue ``result``: the next request of ``method`` (any method dispatched to a
    handler, in either era; not ``initialize`` nor the legacy ``ping``) is
    answered with exactly that JSON-RPC ``result``, verbatim, instead of being
    handled. Several scripts for one method are used in order. Answers at once.

Cancellation: ``notifications/cancelled`` {requestId} stops a running tool and
suppresses its answer (except ``ignore_cancel``). Unknown methods get -32601,
malformed messages -32600, undecodable lines -32700; the server never dies of
bad input. On stdin EOF it gives requests still running up to 0.5 s to answer,
then exits with status 0 (unless ``--ignore-stdin-eof``).

HTTP mode (``--transport http``)
--------------------------------
The server binds ``--host``/``--port``, prints ``listening on
http://HOST:PORT/mcp`` as the first stdout line (flushed; the real port when
``--port 0``), writes nothing else to stdout, and serves until SIGTERM or SIGINT,
which end every open stream cleanly and exit with status 0 (with
``--ignore-stdin-eof`` SIGTERM is ignored; stdin is never read). It is built on
``http.server.ThreadingHTTPServer`` (HTTP/1.1, keep-alive; SSE bodies are sent
chunked; a thread per connection). ``--startup-delay`` delays the binding;
``--stderr-flood`` and ``--spawn-grandchild`` work as over stdio. Every era and
knob above applies, with these transport rules.

Each legacy session (and each ``/sse`` connection) runs its own protocol core,
as if it were a separate stdio process: its own catalog, ``mutate_catalog``
changes, log level, subscriptions and scripted results. All modern requests
share one core (concurrent modern requests with equal JSON-RPC ids are kept
apart; ids are echoed as sent).

Streamable HTTP, ``/mcp``: which era a POST is served in
    ``--era modern``: always modern. ``--era legacy``: always legacy. ``--era
    dual``: a request ``initialize`` starts a legacy session; a request carrying
    ``params._meta["io.modelcontextprotocol/protocolVersion"]`` (or
    ``server/discover``, ``subscriptions/listen``) is modern, whatever
    ``Mcp-Session-Id`` says; any other request, and any batch, is legacy; a
    notification or response is legacy with an ``Mcp-Session-Id`` header,
    modern without.
Answers to a POSTed request (both eras)
    ``application/json`` when the final response is the first message the
    request produces; ``text/event-stream`` from the start when the request has
    ``_meta.progressToken`` or is ``subscriptions/listen``, and as soon as the
    request sends anything before its response (a log notification, a
    server-to-client request, raw hostile bytes). An SSE response stream
    carries the notifications and server requests related to the request and
    ends with its response (messages after the response, e.g. the copy of
    ``duplicate_response``, are dropped). Events are ``data: <compact JSON>``;
    legacy events also carry ``id: <stream>-<seq>``. A POST that holds no
    request (notification, response, batch of those) is answered 202 with an
    empty body, or 400 with the JSON-RPC error the core answers (e.g. -32600).
    A body that is not JSON is 400 with -32700. ``Accept``, ``Content-Type``
    and ``Origin`` are not checked.
Modern era (2026-07-28): POST only
    ``GET`` and ``DELETE`` on ``/mcp`` are 405 (``Allow: POST``); ``/sse`` and
    ``/messages`` are 404; no session id is minted or looked at. Before
    dispatch, when the body has a protocol-version ``_meta`` string, the
    headers must agree with the body, else 400 with ``{"code": -32020,
    "message": "Header mismatch: ..."}`` (no ``data``): exactly one
    ``MCP-Protocol-Version`` equal to it, one ``Mcp-Method`` equal to the
    method, and for ``tools/call``/``prompts/get`` (``params.name``) and
    ``resources/read`` (``params.uri``) one ``Mcp-Name`` equal to that value. A
    header value ``=?base64?<Base64>?=`` is compared after decoding (standard
    Base64, UTF-8); a plain value must be ASCII and equal byte for byte.
    ``Mcp-Param-*`` headers are not validated, only recorded. Status codes of
    JSON answers: 404 for -32601 (unknown method, ``initialize``); 400 for
    -32020, -32021, -32022 (``data.supported``, ``data.requested``), -32700,
    -32600, and for -32602 when the ``_meta`` envelope is missing or invalid;
    200 for every other result or error (e.g. -32602 for an unknown tool). A
    client closing a response stream (or the connection while it waits for a
    JSON answer) cancels the request, like ``notifications/cancelled``; that
    is how a ``subscriptions/listen`` stream ends (it stays open until then or
    until the server shuts down). Streams carry no event ids and
    ``Last-Event-ID`` is ignored.
Legacy era (2025-03-26 … 2025-11-25): sessions
    ``POST initialize`` creates a session; a successful answer carries
    ``Mcp-Session-Id`` (32 random hex digits). Every later request must carry
    it: missing is 400 (JSON-RPC error -32000), unknown (or ended) is 404
    (-32001 "Session not found"). An ``MCP-Protocol-Version`` header that
    differs from the negotiated version is 400 (-32600); an absent one is
    fine. Notifications and responses (e.g. to a server-to-client request) are
    202. Batches (2025-03-26 sessions) are answered as one JSON array. JSON-RPC
    errors are HTTP 200. Disconnecting is not cancellation: a request whose
    client went away keeps running, and its SSE stream keeps collecting events
    for resumption. ``DELETE /mcp`` with the session id ends the session (200).
``GET /mcp`` (legacy): the standalone stream
    Needs ``Accept`` containing ``text/event-stream`` (else 406) and the
    session id (400/404 as above). It carries the session's unsolicited
    messages (``list_changed`` from ``mutate_catalog``,
    ``resources/updated``); its events are ids ``0-1``, ``0-2``, … A new GET
    replaces the previous one (whose response ends). Messages sent while no GET
    is open are not delivered to a later plain GET, only on resumption.
Resumption (legacy)
    A GET with ``Last-Event-ID: S-N`` (an id the session issued) replays the
    events of stream S after N (the standalone stream, or the SSE answer of a
    POST; the last 1000 events of each stream and the last 64 POST streams of a
    session are kept), then continues that stream live: a POST stream ends with
    its request's response, the standalone stream stays open. An unknown id
    opens the standalone stream as a plain GET would.
HTTP+SSE (2024-11-05), ``/sse`` and ``/messages`` (not with ``--era modern``)
    ``GET /sse`` opens a session and an SSE stream whose first event is
    ``event: endpoint`` / ``data: /messages?session=<id>`` (or the
    ``--endpoint-url``); every server message follows as ``event: message``
    (no event ids). ``POST /messages?session=<id>`` takes one message (or a
    2025-03-26 batch) and answers 202 ``Accepted``; the answers go out on the
    stream. Missing session 400, unknown 404, not JSON 400. ``POST /sse`` and
    ``GET /messages`` are 405. The session ends when the client closes the
    stream. Point a client at ``http://HOST:PORT/sse`` to test its fallback
    (POST there is 405).
Any other path is 404.

Order of evaluation of every HTTP request: recorded, then a pending ``status``
override answers it, then a pending 404 storm, then ``--redirect-to`` (POST
only), then ``--get-status`` (GET), then the rules above.

``--record FILE`` in HTTP mode appends one JSON line per HTTP request (any path
and method, also those answered by a knob), flushed before it is handled::

    {"method": "POST", "path": "/mcp?x=1",
     "headers": [["Host", "127.0.0.1:4711"], ["Mcp-Method", "tools/call"], ...],
     "body": {...}}

``headers`` lists every header line in order, names as sent; each value is the
raw header bytes decoded as ISO-8859-1 (``value.encode("latin-1")`` gives the
bytes on the wire; the space after the colon is not part of it).
``body`` is the decoded JSON body, ``{"_invalid": "<text>"}`` when the body is
not JSON, and absent when the request had no body.

How the stdio-minded ``hostile`` actions behave over HTTP: raw lines
(``garbage_line``, ``invalid_utf8``, ``deep_json``, ``oversized_line``) become
one SSE event whose data is those bytes (without the newline);
``close_stdout`` closes the connection without an HTTP response (or ends an SSE
stream at once); ``duplicate_response``'s copy is dropped; ``exit`` and
``stderr_flood`` act on the process; ``server_request`` sends the request on the
call's SSE stream and waits for the client's POSTed response.

HTTP hostile actions (``tools/call`` of ``hostile``; over stdio they answer
``isError``):

``expire_session``
    Forget this request's session (legacy, or an ``/sse`` connection): this
    call is still answered, then every request carrying the session id gets
    404 and the standalone GET stream ends (an ``/sse`` stream stays open). A
    modern request has no session: ``isError``.
``session_404_storm`` {count=1}
    The next ``count`` HTTP requests (any) are answered 404 as with
    ``--session-404-storm``.
``drop_stream`` {retry=100}
    Answer with SSE: a priming event (``id`` in legacy, ``retry: <retry>``,
    empty ``data``), then end the HTTP response. Legacy: the call's response is
    then appended to that stream, so a GET with ``Last-Event-ID`` set to the
    priming event's id receives it (and the stream ends). Modern: no ids, the
    request is dropped (never answered). ``/sse``: the SSE stream ends and with
    it the session.
``oversized_body`` {bytes=17825792}
    Answer with an ``application/json`` body of exactly ``bytes`` bytes: this
    call's real response, its text content padded with ``x`` (cut short,
    invalid JSON, if ``bytes`` is below the unpadded size). On an SSE answer
    (progress token) or ``/sse``: one event, as ``oversized_event``.
``oversized_event`` {bytes=17825792}
    Answer with SSE: one event whose data, the padded response as above, is
    exactly ``bytes`` bytes.
``trickle`` {seconds=2}
    Answer with SSE, first sending the SSE comment line ``:...\n`` one byte
    every 0.2 s, ``round(seconds / 0.2)`` bytes in all (at least one), then the
    response event. Stops (the request is dropped) when cancelled.
``status`` {code, body?, headers?, content_type?}
    Answer the next HTTP request (any) with status ``code`` (200..599) and
    ``body``: a string is sent as UTF-8 ``text/plain; charset=utf-8``, any other
    JSON value as ``application/json``, no body when absent; ``headers`` (an
    object of strings) are added; ``content_type`` overrides the type. One-shot.
``ping_flood`` {count=20}
    Send ``count`` server-to-client ``ping`` requests (ids ``"ping-1"``, …)
    back to back on the call's channel without waiting for their answers, then
    answer. The client's answers arrive as POSTs, in the ``--record`` file in
    the order they arrived.
``hold_accepts`` {seconds}
    From now on, hold every POST that carries no request (a notification, an
    answer) ``seconds`` before its 202 (recorded on arrival; a client that
    goes away ends the wait). Process-wide; 0 ends it.

OAuth protection (HTTP mode, ``--oauth-issuer``)
------------------------------------------------
With ``--oauth-issuer`` the server is an OAuth 2.1 protected resource whose
tokens come from :class:`mcpclient.testing.auth_server.AuthServer` (HS256 JWTs
under the secret given with ``--oauth-secret``; see
:mod:`mcpclient.testing.oauth_common`). Its resource identifier is its own
``http://HOST:PORT/mcp``. Every request to ``/mcp``, ``/sse`` and
``/messages`` (any method) must carry ``Authorization: Bearer <token>`` (or
``DPoP <token>`` plus a ``DPoP`` proof) whose token verifies, has ``iss`` equal
to the issuer, ``aud`` equal to the resource identifier, an ``exp`` in the
future (if any) and an ``iat`` after the last revocation. Otherwise the answer
is 401 with a JSON body ``{"error", "error_description"}`` and::

    WWW-Authenticate: Bearer error="invalid_token", error_description="...",
        scope="<challenge scope>", resource_metadata="<url>"

(no ``error`` when no credential was sent; ``scope`` per
``--oauth-challenge-scope``; ``resource_metadata`` only with ``--oauth-prm
challenge``). A token lacking a scope the request needs (``--oauth-scopes``,
plus ``--oauth-tool-scope`` for a ``tools/call`` of that tool) gets 403 with
``error="insufficient_scope", scope="<every scope the request needs>"``. The
scheme is ``DPoP`` (with ``algs="..."``) with ``--oauth-dpop`` or when the
request used DPoP. A DPoP-bound token (``cnf.jkt``) is accepted only with the
DPoP scheme and one proof whose ``htm``/``htu`` (``http://<Host header><path>``)
match the request, ``ath`` the token, key thumbprint ``cnf.jkt``, fresh ``iat``
and unused ``jti`` (401 ``invalid_dpop_proof`` otherwise); with
``--oauth-dpop-nonce`` a proof without the current nonce gets 401
``error="use_dpop_nonce"`` and a ``DPoP-Nonce`` header (also sent on every other
DPoP challenge). Checking DPoP needs PyJWT and ``cryptography``.

``--oauth-issuer URL``
    The authorization server trusted; enables the protection.
``--oauth-secret HEX``
    The HS256 key of its tokens (``AuthServer.token_secret.hex()``); required.
``--oauth-prm {challenge,path,root,none}``
    Where the protected resource metadata (RFC 9728: ``resource``,
    ``authorization_servers: [issuer]``, ``bearer_methods_supported``, and
    ``scopes_supported`` / the DPoP fields when set) is served (GET):
    ``challenge``: at ``/custom/oauth-protected-resource``, named only by the
    challenges' ``resource_metadata``; ``path`` (default):
    ``/.well-known/oauth-protected-resource/mcp``; ``root``:
    ``/.well-known/oauth-protected-resource``; ``none``: nowhere (2025-03-26).
    Every other metadata location is 404.
``--oauth-prm-resource URL``
    The ``resource`` the metadata claims (default: the resource identifier);
    tokens may name it or the real one.
``--oauth-prm-scopes LIST``
    ``scopes_supported`` in the metadata (comma- or space-separated).
``--oauth-scopes LIST``
    Scopes every request's token needs.
``--oauth-challenge-scope LIST``
    The ``scope`` parameter of 401 challenges (default: ``--oauth-scopes``;
    ``""`` omits it).
``--oauth-tool-scope NAME=LIST``
    A ``tools/call`` of NAME also needs LIST (repeatable).
``--oauth-dpop`` / ``--oauth-dpop-nonce``
    Require DPoP-bound tokens / require the server nonce in proofs.
``--oauth-legacy-as URL``
    Forward ``/.well-known/oauth-authorization-server``, ``/authorize``,
    ``/token`` and ``/register`` (any method, query and body; answers passed
    back with their Content-Type, Location, DPoP-Nonce, WWW-Authenticate and
    Cache-Control) to the authorization server at URL, so a 2025-03-26 client
    finds it at the MCP server's origin.

``/oauth-control`` (never protected): ``GET`` answers the state as JSON
(every knob but the secret, ``resource``, ``current_dpop_nonce``,
``revoked_before`` and ``log``: the last 500 guarded requests as ``{"method",
"path", "tool", "scheme", "client_id", "jti", "scope", "status" (null when
let through), "reason"}``). ``POST`` a JSON object to change it (answered with
the new state; 400 and no change for an unknown key or a bad value): any of
``issuer``, ``secret`` (hex), ``prm``, ``prm_resource``, ``prm_scopes``,
``scopes``, ``challenge_scope`` (lists or space-separated strings; null
resets the optional ones), ``tool_scopes`` ({name: scopes}, replacing all),
``dpop``, ``dpop_nonce``, ``legacy_as``, and the actions ``"revoke": true``
(reject every token issued before now), ``"rotate_dpop_nonce": true``,
``"clear_log": true``. Order of evaluation with protection: recorded, then
``/oauth-control``, the metadata and the forwarded paths, then the token check
of the MCP paths, then the rules above.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any, BinaryIO, NoReturn

from .catalog import FAMILIES, LOG_LEVELS, CatalogFileError, load_catalog_file
from .core import (
    CAPABILITY_NAMES,
    ERAS,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    ServerConfig,
    ServerCore,
)
from .http_server import HttpOptions, serve_http
from .oauth_guard import PRM_MODES, GuardConfig
from .tools import flood_stderr

__all__ = ["StdioChannel", "build_parser", "main", "serve"]

#: How long in-flight requests may still answer after stdin EOF.
EOF_GRACE_SECONDS = 0.5

# Held so the grandchild's Popen is never collected (it must outlive us unreaped).
_GRANDCHILDREN: list[subprocess.Popen[bytes]] = []


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class StdioChannel:
    """The stdio front end's :class:`~mcpclient.testing.core.Channel`.

    Thread safety: every method may be called from any thread; one lock keeps
    each frame contiguous on stdout.
    """

    def __init__(self, out_fd: int = 1, err_fd: int = 2) -> None:
        """Write frames to ``out_fd`` and diagnostics to ``err_fd``."""
        self._out_fd = out_fd
        self._err_fd = err_fd
        self._lock = threading.Lock()
        self._err_lock = threading.Lock()
        self._closed = False

    def send(self, message: Any) -> None:
        """Write ``message`` as one compact JSON line."""
        try:
            text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates echoed back: escape them instead
            data = json.dumps(message, separators=(",", ":")).encode("ascii")
        self.send_raw((data, b"\n"))

    def send_raw(self, chunks: Iterable[bytes]) -> None:
        """Write ``chunks`` contiguously; dropped once stdout is closed or broken."""
        with self._lock:
            if self._closed:
                return
            try:
                for chunk in chunks:
                    _write_all(self._out_fd, chunk)
            except OSError:
                self._closed = True

    def close_output(self) -> None:
        """Close stdout (the peer sees EOF); fd 1 then points at /dev/null."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            # dup2 closes the pipe end atomically and keeps fd 1 from being reused.
            os.dup2(devnull, self._out_fd)
            os.close(devnull)

    def write_stderr(self, data: bytes) -> None:
        """Write ``data`` to stderr, ignoring a closed pipe."""
        with self._err_lock, contextlib.suppress(OSError):
            _write_all(self._err_fd, data)

    def exit_process(self, code: int) -> NoReturn:
        """End the process at once; nothing else is flushed."""
        os._exit(code)


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _non_negative_float(value: str) -> float:
    number = float(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return number


def _non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return number


def _port(value: str) -> int:
    number = int(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError("must be within 0..65535")
    return number


#: Extra spellings accepted for a FAMILY argument.
_FAMILY_ALIASES = {"templates": "resourceTemplates", "resources/templates": "resourceTemplates"}


def _family(value: str) -> str:
    family = _FAMILY_ALIASES.get(value.strip(), value.strip())
    if family not in FAMILIES:
        choices = ", ".join([*FAMILIES, *_FAMILY_ALIASES])
        raise argparse.ArgumentTypeError(f"unknown family {value!r} (choose from {choices})")
    return family


def _families(value: str) -> list[str]:
    return [_family(part) for part in value.split(",") if part.strip()]


def _item_count(value: str) -> tuple[str, int]:
    family, sep, count = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected FAMILY=N")
    return _family(family), _non_negative_int(count)


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser (the flags are documented in this module)."""
    p = argparse.ArgumentParser(
        prog="python -m mcpclient.testing.server",
        description="Scriptable MCP test server over stdio or HTTP (see the module docstring).",
    )
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=_port, default=0)
    p.add_argument("--session-404-storm", type=_non_negative_int, default=0, metavar="N")
    p.add_argument("--redirect-to", metavar="URL", default=None)
    p.add_argument("--endpoint-url", metavar="URL", default=None)
    p.add_argument("--get-status", type=int, metavar="CODE", default=None)
    p.add_argument("--no-session-id", action="store_true")
    p.add_argument("--era", choices=ERAS, default="dual")
    p.add_argument("--capabilities", type=_csv, default=CAPABILITY_NAMES)
    p.add_argument("--server-version", default="1.0.0")
    p.add_argument("--server-version-file", metavar="PATH", default=None)
    p.add_argument("--exit-at-startup-file", metavar="PATH", default=None)
    p.add_argument("--instructions", default=None)
    p.add_argument("--legacy-versions", type=_csv, default=LEGACY_VERSIONS)
    p.add_argument("--modern-versions", type=_csv, default=MODERN_VERSIONS)
    p.add_argument("--page-size", type=_non_negative_int, default=0)
    p.add_argument("--catalog", metavar="FILE", default=None)
    p.add_argument("--ttl-ms", type=_non_negative_int, default=0)
    p.add_argument("--log-level", choices=LOG_LEVELS, default="debug")
    p.add_argument("--exit-on-discover", action="store_true")
    p.add_argument("--silent-discover", action="store_true")
    p.add_argument("--no-initialize-answer", action="store_true")
    p.add_argument("--exit-after-initialize", action="store_true")
    p.add_argument("--startup-delay", type=_non_negative_float, default=0.0, metavar="SECONDS")
    p.add_argument("--stderr-flood", type=_non_negative_int, default=0, metavar="BYTES")
    p.add_argument("--ignore-stdin-eof", action="store_true")
    p.add_argument("--spawn-grandchild", action="store_true")
    p.add_argument("--record", metavar="FILE", default=None)
    for flag in ("--cursor-loop", "--endless-pages", "--huge-cursor"):
        p.add_argument(flag, type=_families, action="extend", default=[], metavar="FAMILY")
    p.add_argument(
        "--item-count", type=_item_count, action="append", default=[], metavar="FAMILY=N"
    )
    p.add_argument("--list-delay", type=_non_negative_float, default=0.0, metavar="SECONDS")
    p.add_argument("--missing-list", type=_families, action="extend", default=[], metavar="FAMILY")
    p.add_argument("--reject-versions", type=_non_negative_int, default=0, metavar="N")
    p.add_argument("--mrtr", action="store_true")
    _add_oauth_flags(p)
    return p


def _scope_list(value: str) -> tuple[str, ...]:
    return tuple(value.replace(",", " ").split())


def _tool_scope(value: str) -> tuple[str, tuple[str, ...]]:
    name, sep, scopes = value.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("expected NAME=SCOPES")
    return name, _scope_list(scopes)


def _add_oauth_flags(p: argparse.ArgumentParser) -> None:
    """The ``--oauth-*`` flags (HTTP mode; see "OAuth protection")."""
    p.add_argument("--oauth-issuer", metavar="URL", default=None)
    p.add_argument("--oauth-secret", metavar="HEX", default=None)
    p.add_argument("--oauth-prm", choices=PRM_MODES, default="path")
    p.add_argument("--oauth-prm-resource", metavar="URL", default=None)
    p.add_argument("--oauth-prm-scopes", type=_scope_list, metavar="LIST", default=None)
    p.add_argument("--oauth-scopes", type=_scope_list, metavar="LIST", default=())
    p.add_argument("--oauth-challenge-scope", type=_scope_list, metavar="LIST", default=None)
    p.add_argument(
        "--oauth-tool-scope", type=_tool_scope, action="append", default=[], metavar="NAME=LIST"
    )
    p.add_argument("--oauth-dpop", action="store_true")
    p.add_argument("--oauth-dpop-nonce", action="store_true")
    p.add_argument("--oauth-legacy-as", metavar="URL", default=None)


def _oauth_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> GuardConfig | None:
    """The protection the ``--oauth-*`` flags ask for (None without ``--oauth-issuer``)."""
    if args.oauth_issuer is None:
        return None
    if args.transport != "http":
        parser.error("--oauth-issuer needs --transport http")
    if args.oauth_secret is None:
        parser.error("--oauth-issuer needs --oauth-secret")
    try:
        return GuardConfig(
            issuer=args.oauth_issuer,
            secret=bytes.fromhex(args.oauth_secret),
            prm=args.oauth_prm,
            prm_resource=args.oauth_prm_resource,
            prm_scopes=args.oauth_prm_scopes,
            scopes=args.oauth_scopes,
            challenge_scope=args.oauth_challenge_scope,
            tool_scopes=dict(args.oauth_tool_scope),
            dpop=args.oauth_dpop,
            dpop_nonce=args.oauth_dpop_nonce,
            legacy_as=args.oauth_legacy_as,
        )
    except ValueError as exc:
        parser.error(f"--oauth-*: {exc}")


def _config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> ServerConfig:
    catalog = None
    if args.catalog is not None:
        try:
            catalog = load_catalog_file(args.catalog)
        except CatalogFileError as exc:
            parser.error(str(exc))
    server_version = args.server_version
    if args.server_version_file is not None:
        try:
            with open(args.server_version_file, encoding="utf-8") as handle:
                server_version = handle.read().strip()
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"--server-version-file: {exc}")
    try:
        return ServerConfig(
            era=args.era,
            capabilities=tuple(args.capabilities),
            server_version=server_version,
            instructions=args.instructions,
            legacy_versions=tuple(args.legacy_versions),
            modern_versions=tuple(args.modern_versions),
            page_size=args.page_size,
            catalog=catalog,
            ttl_ms=args.ttl_ms,
            log_level=args.log_level,
            exit_on_discover=args.exit_on_discover,
            silent_discover=args.silent_discover,
            no_initialize_answer=args.no_initialize_answer,
            exit_after_initialize=args.exit_after_initialize,
            record_path=args.record,
            item_counts=dict(args.item_count),
            cursor_loop=tuple(args.cursor_loop),
            endless_pages=tuple(args.endless_pages),
            huge_cursor=tuple(args.huge_cursor),
            list_delay=args.list_delay,
            mrtr=args.mrtr,
            missing_lists=tuple(args.missing_list),
            reject_versions=args.reject_versions,
        )
    except ValueError as exc:
        parser.error(str(exc))


def serve(core: ServerCore, stdin: BinaryIO) -> None:
    """Feed ``stdin``'s lines to ``core`` until EOF (the reader loop)."""
    for line in iter(stdin.readline, b""):
        core.handle_bytes(line)


def _exit_if_present(path: str) -> None:
    """``--exit-at-startup-file``: note this start in ``path`` and exit, if it exists."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # never re-creates a removed file
    except FileNotFoundError:
        return
    except OSError:
        pass  # present but not writable: still exit
    else:
        with contextlib.suppress(OSError):
            _write_all(fd, f"exited {os.getpid()}\n".encode())
        os.close(fd)
    _write_all(2, b"exiting at startup: --exit-at-startup-file exists\n")
    os._exit(1)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the server: parse flags, apply the startup knobs, serve stdin, exit."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.exit_at_startup_file is not None:
        _exit_if_present(args.exit_at_startup_file)
    config = _config(args, parser)
    oauth = _oauth_config(args, parser)
    channel = StdioChannel()
    if args.ignore_stdin_eof:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.spawn_grandchild:
        child = subprocess.Popen(["sleep", "300"])
        _GRANDCHILDREN.append(child)
        channel.write_stderr(f"grandchild-pid: {child.pid}\n".encode())
    if args.stderr_flood:
        flood_stderr(channel.write_stderr, args.stderr_flood)
    if args.startup_delay:
        time.sleep(args.startup_delay)
    if args.transport == "http":
        options = HttpOptions(
            host=args.host,
            port=args.port,
            session_404_storm=args.session_404_storm,
            redirect_to=args.redirect_to,
            endpoint_url=args.endpoint_url,
            oauth=oauth,
            get_status=args.get_status,
            no_session_id=args.no_session_id,
        )
        serve_http(config, options, handle_sigterm=not args.ignore_stdin_eof)
    core = ServerCore(config, channel)
    serve(core, sys.stdin.buffer)
    if args.ignore_stdin_eof:
        while True:
            time.sleep(3600)
    # Let calls already running answer (a piped script ends with EOF), but not for long.
    core.wait_idle(EOF_GRACE_SECONDS)
    core.close()
    # os._exit: a tool thread may be blocked writing to a full pipe; do not wait for it.
    os._exit(0)


if __name__ == "__main__":
    main()
