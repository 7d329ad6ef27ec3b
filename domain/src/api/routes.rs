//! Every route the Worker answers, in one table: the Worker's router matches a request against it
//! ([`find`]) and runs the handler of the route's [`Op`]; the builder writes `openapi.json` and
//! `llms-full.txt` from it. A route cannot be answered without being described, nor described
//! without being answered: both read this table, and the edge's `match` over [`Op`] is exhaustive.
//!
//! A path template's `{name}` takes one whole path segment; `{name}.json` takes a segment that ends
//! in `.json` (so `/r/{slug}.json`, like the cards and `/r/{slug}.cook`, stands before `/r/{slug}`).
//! Literal segments are tried in table order, so `/api/episodes/changes` stands before
//! `/api/episodes/{episode_id}`. `GET` also answers `HEAD`.

/// What the Worker runs for a route; the edge's router has one arm per variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    SearchRecipes,
    CreateRecipe,
    RecipeJson,
    RecipeCooklang,
    RecipePage,
    RecipeCard,
    RecipeCardPng,
    ChangeRecipe,
    ForkRecipe,
    RecipeHistory,
    Changes,
    Me,
    AiWrite,
    AiChange,
    DietVersion,
    Attribute,
    Shows,
    Episodes,
    SpeakerDecisions,
    Episode,
    Transcript,
    Speakers,
    PhraseSearch,
    DecideSpeaker,
    RequestEpisode,
    IntakeEpisodes,
    IntakeJob,
    IntakeTranscribed,
    Mcp,
    Kitchen,
    KitchenGithubLogin,
    KitchenGithubCallback,
    KitchenDevLogin,
    KitchenLogout,
    KitchenNewKey,
    KitchenRevokeKey,
    KitchenImport,
    KitchenSaveDraft,
    KitchenRequestEpisode,
    QuotesPage,
    EpisodePage,
    RunsPage,
    ShowPage,
    SearchPage,
    ReviewPage,
    ReviewDecide,
    /// A built file (static asset or packed), served as it is.
    BuiltFile,
}

/// The groups routes are listed under (OpenAPI `tags`), with what each holds.
pub const TAGS: [(&str, &str); 6] = [
    ("Recipes", "Read, search, write, fork and follow CC0 recipes"),
    ("AI", "The site's AI: recipes written or changed on request, and shared diet versions"),
    ("Quotes", "Who said a quote, and when: shows, episodes, transcripts, speakers, phrase search"),
    ("Accounts", "Your account, API keys and imported recipe drafts: the kitchen page and its forms"),
    ("Agents", "The MCP server"),
    ("Files", "Files the build writes, served as they are: pages, open data, schemas, llms.txt"),
];

impl Op {
    /// Whether the operation creates, and so takes an `Idempotency-Key` (`domain::site::idempotency`):
    /// the edge runs these through its one keyed path, and `openapi.json` lists the header on them.
    pub fn takes_idempotency_key(self) -> bool {
        matches!(self, Op::CreateRecipe | Op::ForkRecipe | Op::AiWrite | Op::AiChange | Op::DietVersion)
    }

    /// The group ([`TAGS`]) the operation is listed under.
    pub fn tag(self) -> &'static str {
        match self {
            Op::SearchRecipes
            | Op::CreateRecipe
            | Op::RecipeJson
            | Op::RecipeCooklang
            | Op::RecipePage
            | Op::RecipeCard
            | Op::RecipeCardPng
            | Op::ChangeRecipe
            | Op::ForkRecipe
            | Op::RecipeHistory
            | Op::Changes => "Recipes",
            Op::AiWrite | Op::AiChange | Op::DietVersion => "AI",
            Op::Attribute
            | Op::Shows
            | Op::Episodes
            | Op::SpeakerDecisions
            | Op::Episode
            | Op::Transcript
            | Op::Speakers
            | Op::PhraseSearch
            | Op::DecideSpeaker
            | Op::RequestEpisode
            | Op::IntakeEpisodes
            | Op::IntakeJob
            | Op::IntakeTranscribed => "Quotes",
            Op::Me
            | Op::Kitchen
            | Op::KitchenGithubLogin
            | Op::KitchenGithubCallback
            | Op::KitchenDevLogin
            | Op::KitchenLogout
            | Op::KitchenNewKey
            | Op::KitchenRevokeKey
            | Op::KitchenImport
            | Op::KitchenSaveDraft
            | Op::KitchenRequestEpisode
            | Op::ReviewPage
            | Op::ReviewDecide => "Accounts",
            Op::QuotesPage | Op::EpisodePage | Op::RunsPage | Op::ShowPage | Op::SearchPage => "Quotes",
            Op::Mcp => "Agents",
            Op::BuiltFile => "Files",
        }
    }
}

/// An HTTP method a route answers (`Get` answers `HEAD` too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }

    fn answers(self, asked: &str) -> bool {
        asked == self.name() || (self == Method::Get && asked == "HEAD")
    }
}

/// What a route's body is on success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// JSON of the named schema (a `components/schemas` entry of `openapi.json`).
    Json(&'static str),
    Html,
    Text,
    /// An image of the given media type.
    Image(&'static str),
    /// JSON Lines: one document a line.
    JsonLines,
    /// A redirect (`Location`), no body.
    Redirect,
    /// No body (`202 Accepted`, `304 Not Modified`).
    Empty,
}

/// What a route takes besides its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    /// Query parameters: the properties of the operation's input type that are not path parameters.
    Query,
    /// A JSON body of the named schema.
    Json(&'static str),
    /// An HTML form (`application/x-www-form-urlencoded`) of a person's browser: its fields besides
    /// the `csrf` token every form carries.
    Form(&'static [&'static str]),
}

/// One route.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub op: Op,
    pub method: Method,
    pub path: &'static str,
    pub summary: &'static str,
    /// Needs `Authorization: Bearer <key>`.
    pub key: bool,
    pub takes: Takes,
    /// Success status and its body.
    pub ok: (u16, Answer),
    /// Other answers: status, body and what it means (a form refused is a page, not a problem).
    pub also: &'static [(u16, Answer, &'static str)],
    /// Error statuses it may answer (problem+json).
    pub errors: &'static [u16],
    /// A `curl` line; `{base}` is the site's address.
    pub example: &'static str,
}

/// The refusals a person's browser (`Accept: text/html`) gets as a page saying why, rather than
/// problem+json, on a route [`Route::refuses_as_page`] (`edge::http::wants_page`).
pub const PAGE_REFUSALS: [u16; 5] = [400, 403, 404, 413, 429];

impl Route {
    /// Whether a browser's refused request here is answered as a page: a GET outside `/api/` and
    /// `/mcp` whose last segment names no file, as `edge::http::wants_page` asks of a request.
    pub fn refuses_as_page(&self) -> bool {
        let last = self.path.rsplit('/').next().unwrap_or_default();
        self.method == Method::Get
            && !self.path.starts_with("/api/")
            && self.path != "/mcp"
            && !last.contains('.')
    }
}

const NOT_MODIFIED: &[(u16, Answer, &str)] =
    &[(304, Answer::Empty, "not modified (`If-None-Match` names the current ETag)")];
/// A create also answers 409 while another request with its `Idempotency-Key` runs.
const WRITE_ERRORS: &[u16] = &[400, 401, 409, 413, 415, 422, 429];
const AI_ERRORS: &[u16] = &[400, 401, 403, 404, 409, 413, 415, 422, 429, 502, 503];
const FORM_ERRORS: &[u16] = &[400, 403, 404, 409, 413, 429];

/// A read route: JSON answer, no key.
const fn read(
    op: Op,
    path: &'static str,
    summary: &'static str,
    takes: Takes,
    answer: &'static str,
    errors: &'static [u16],
    example: &'static str,
) -> Route {
    get(op, path, summary, takes, Answer::Json(answer), errors, example)
}

/// A `GET` without a key answering 200 with `answer`.
const fn get(
    op: Op,
    path: &'static str,
    summary: &'static str,
    takes: Takes,
    answer: Answer,
    errors: &'static [u16],
    example: &'static str,
) -> Route {
    Route {
        op,
        method: Method::Get,
        path,
        summary,
        key: false,
        takes,
        ok: (200, answer),
        also: &[],
        errors,
        example,
    }
}

/// `route`, answering 304 as well when `If-None-Match` names the current ETag.
const fn cached(route: Route) -> Route {
    Route { also: NOT_MODIFIED, ..route }
}

/// A built file served as it is.
const fn file(path: &'static str, summary: &'static str, answer: Answer) -> Route {
    Route {
        op: Op::BuiltFile,
        method: Method::Get,
        path,
        summary,
        key: false,
        takes: Takes::Nothing,
        ok: (200, answer),
        also: NOT_MODIFIED,
        errors: &[404],
        example: "",
    }
}

/// A page of the quote service: HTML, no key; a bad query is 400 and an unknown episode or show 404.
const fn page(
    op: Op,
    path: &'static str,
    summary: &'static str,
    takes: Takes,
    example: &'static str,
) -> Route {
    get(op, path, summary, takes, Answer::Html, &[400, 404], example)
}

/// A form post of the kitchen page: a person's browser, answered with a redirect back to the page.
const fn form(op: Op, path: &'static str, summary: &'static str, fields: &'static [&'static str]) -> Route {
    Route {
        op,
        method: Method::Post,
        path,
        summary,
        key: false,
        takes: Takes::Form(fields),
        ok: (303, Answer::Redirect),
        also: &[],
        errors: FORM_ERRORS,
        example: "",
    }
}

/// A form post of a person's browser, answered with a redirect; refused, it is answered with the
/// pages `refused` lists, never problem+json.
const fn form_refused_as_pages(
    op: Op,
    path: &'static str,
    summary: &'static str,
    fields: &'static [&'static str],
    refused: &'static [(u16, Answer, &'static str)],
) -> Route {
    Route { also: refused, errors: &[], ..form(op, path, summary, fields) }
}

/// Every route, in the order the router tries them.
pub const ROUTES: &[Route] = &[
    read(
        Op::SearchRecipes,
        "/api/recipes",
        "Search recipes",
        Takes::Query,
        "RecipePage",
        &[400],
        "curl -s '{base}/api/recipes?q=lentil+soup&vegan=1&lang=en'",
    ),
    Route {
        op: Op::CreateRecipe,
        method: Method::Post,
        path: "/api/recipes",
        summary: "Create a recipe (CC0, owned by the key's owner); 201 with Location",
        key: true,
        takes: Takes::Json("RecipeBody"),
        ok: (201, Answer::Json("PublishedRecipe")),
        also: &[],
        errors: WRITE_ERRORS,
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data @recipe.json {base}/api/recipes",
    },
    cached(get(
        Op::RecipeJson,
        "/r/{slug}.json",
        "One recipe, all languages, with the server-set fields; scaled and converted on request",
        Takes::Query,
        Answer::Json("AdjustedRecipe"),
        &[400, 404],
        "curl -s '{base}/r/hummus.json?servings=8&units=us'",
    )),
    // The cards come before the page, whose `{slug}` would take any name.
    cached(get(
        Op::RecipeCard,
        "/r/{card}.svg",
        "A recipe's card (`{slug}.16x9`, `.4x3` or `.1x1`), drawn from its current document: for recipes written through the API",
        Takes::Nothing,
        Answer::Image("image/svg+xml"),
        &[404],
        "curl -s {base}/r/hummus.16x9.svg",
    )),
    Route {
        op: Op::RecipeCardPng,
        method: Method::Get,
        path: "/r/{card}.png",
        summary: "A built recipe's card as the build drew it (`{slug}.16x9`); `.4x3` and `.1x1` are drawn as SVG only",
        key: false,
        takes: Takes::Nothing,
        ok: (200, Answer::Image("image/png")),
        also: &[
            (301, Answer::Redirect, "`{slug}.4x3` or `{slug}.1x1`: to the same card as SVG"),
            (304, Answer::Empty, "not modified (`If-None-Match` names the current ETag)"),
        ],
        errors: &[404],
        example: "curl -sI {base}/r/hummus.1x1.png",
    },
    cached(get(
        Op::RecipeCooklang,
        "/r/{slug}.cook",
        "One language of a recipe as Cooklang, metadata in front matter; scaled and converted on request",
        Takes::Query,
        Answer::Text,
        &[400, 404],
        "curl -s '{base}/r/hummus.cook?lang=pt'",
    )),
    cached(get(
        Op::RecipePage,
        "/r/{slug}",
        "The recipe page (HTML, right-to-left for Hebrew), with a servings control and cook mode",
        Takes::Query,
        Answer::Html,
        &[400, 404],
        "curl -s {base}/r/hummus",
    )),
    Route {
        op: Op::ChangeRecipe,
        method: Method::Put,
        path: "/api/r/{slug}",
        summary: "Change your own recipe: the whole document plus `note`; `If-Match: \"<version>\"` guards against lost updates",
        key: true,
        takes: Takes::Json("RecipeChange"),
        ok: (200, Answer::Json("PublishedRecipe")),
        also: &[],
        errors: &[400, 401, 403, 404, 409, 412, 413, 415, 422, 429],
        example: "curl -si -X PUT -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' -H 'If-Match: \"1\"' --data @changed.json {base}/api/r/my-hummus",
    },
    Route {
        op: Op::AiChange,
        method: Method::Post,
        path: "/api/r/{slug}/ai",
        summary: "The site's AI changes a recipe: yours in place (200), anyone else's after forking it to you (201)",
        key: true,
        takes: Takes::Json("AiWrite"),
        ok: (200, Answer::Json("PublishedRecipe")),
        also: &[(201, Answer::Json("PublishedRecipe"), "a fork of someone else's recipe, changed")],
        errors: AI_ERRORS,
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data '{\"prompt\":\"halve the sugar\",\"lang\":\"en\"}' {base}/api/r/banana-bread/ai",
    },
    Route {
        op: Op::DietVersion,
        method: Method::Post,
        path: "/api/r/{slug}/variant/{kind}",
        summary: "The shared diet version (kind gf, vegan or both): 201 when made, 200 when it already existed",
        key: true,
        takes: Takes::Nothing,
        ok: (201, Answer::Json("PublishedRecipe")),
        also: &[(200, Answer::Json("PublishedRecipe"), "the diet version already existed")],
        errors: AI_ERRORS,
        example: "curl -si -X POST -H \"Authorization: Bearer $KEY\" {base}/api/r/banana-bread/variant/gf",
    },
    Route {
        op: Op::ForkRecipe,
        method: Method::Post,
        path: "/api/r/{slug}/fork",
        summary: "Your own copy of any recipe (forked_from set); 201",
        key: true,
        takes: Takes::Nothing,
        ok: (201, Answer::Json("PublishedRecipe")),
        also: &[],
        errors: &[400, 401, 404, 409, 422, 429],
        example: "curl -si -X POST -H \"Authorization: Bearer $KEY\" {base}/api/r/shakshuka/fork",
    },
    read(
        Op::RecipeHistory,
        "/api/r/{slug}/history",
        "A recipe's history, newest first: the API changes the build does not have yet, then its git \
         history; a page stops at `limit` items or 1 MiB of them",
        Takes::Query,
        "Object",
        &[400, 404],
        "curl -s {base}/api/r/hummus/history",
    ),
    read(
        Op::Changes,
        "/api/changes",
        "The public change feed of API writes, oldest first; a page stops at `limit` items or 1 MiB of \
         them, and `next_since` (also as the string `next_cursor`) is where the next page starts",
        Takes::Query,
        "Object",
        &[400],
        "curl -s '{base}/api/changes?since=0&limit=100'",
    ),
    Route {
        op: Op::Me,
        method: Method::Get,
        path: "/api/me",
        summary: "Who the key belongs to: handle, display name, key label, role",
        key: true,
        takes: Takes::Nothing,
        ok: (200, Answer::Json("Me")),
        also: &[],
        errors: &[401],
        example: "curl -s -H \"Authorization: Bearer $KEY\" {base}/api/me",
    },
    Route {
        op: Op::AiWrite,
        method: Method::Post,
        path: "/api/ai/write",
        summary: "The site's AI writes a new recipe from a prompt, stored as yours; 201. 503 when no AI is configured",
        key: true,
        takes: Takes::Json("AiWrite"),
        ok: (201, Answer::Json("PublishedRecipe")),
        also: &[],
        errors: AI_ERRORS,
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data '{\"prompt\":\"a quick lentil soup\",\"lang\":\"en\"}' {base}/api/ai/write",
    },
    read(
        Op::Attribute,
        "/api/attribute",
        "Who said a quote in an episode, and when",
        Takes::Query,
        "Attribution",
        &[400, 404],
        "curl -s '{base}/api/attribute?source_url=https://changelog.com/podcast/600&quote=open+source'",
    ),
    read(
        Op::Shows,
        "/api/shows",
        "Shows with their episode counts and licences",
        Takes::Nothing,
        "Object",
        &[],
        "curl -s {base}/api/shows",
    ),
    read(
        Op::Episodes,
        "/api/episodes",
        "Published episodes, one page at a time",
        Takes::Query,
        "EpisodePage",
        &[400],
        "curl -s '{base}/api/episodes?limit=5'",
    ),
    Route {
        op: Op::RequestEpisode,
        method: Method::Post,
        path: "/api/episodes",
        summary: "Ask for the episode at an address (its page, or its audio when a feed lists it) to be \
                  taken in: 202 with the job's Location and Retry-After; the same address asked again \
                  is the same job (200 once it has finished), and a failed one is tried again",
        key: true,
        takes: Takes::Json("EpisodeRequest"),
        ok: (202, Answer::Json("IntakeJob")),
        also: &[(200, Answer::Json("IntakeJob"), "the address's job had finished: ready or failed")],
        errors: &[400, 401, 413, 415, 422, 429],
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' \
                  --data '{\"source_url\":\"https://example.com/podcast/ep1\"}' {base}/api/episodes",
    },
    read(
        Op::IntakeEpisodes,
        "/api/intake/episodes",
        "The public feed of episodes taken in by their address, oldest first, each with the content \
         files `builder sync` commits",
        Takes::Query,
        "Object",
        &[400],
        "curl -s '{base}/api/intake/episodes?since=0'",
    ),
    Route {
        op: Op::IntakeJob,
        method: Method::Get,
        path: "/api/intake/{job_id}",
        summary: "Where an intake job stands: queued, fetching, transcribing, identifying, ready (with \
                  the episode) or failed (with a reason); 202 with Retry-After while it runs",
        key: false,
        takes: Takes::Nothing,
        ok: (200, Answer::Json("IntakeJob")),
        also: &[(202, Answer::Json("IntakeJob"), "the job is still running")],
        errors: &[404],
        example: "curl -s {base}/api/intake/in_abcdefghij",
    },
    Route {
        op: Op::IntakeTranscribed,
        method: Method::Post,
        path: "/api/intake/{job_id}/transcribed",
        summary: "The transcription service's callback for a job (AssemblyAI's webhook, Deepgram's \
                  callback), carrying the job's token (`?token=`): the first delivery moves the job \
                  along, a later one changes nothing (`accepted: false`)",
        key: false,
        takes: Takes::Json("Object"),
        ok: (200, Answer::Json("Object")),
        also: &[],
        errors: &[401, 404, 413, 422],
        example: "",
    },
    read(
        Op::SpeakerDecisions,
        "/api/episodes/changes",
        "The public feed of speaker-name decisions, oldest first (what `builder sync` commits)",
        Takes::Query,
        "Object",
        &[400],
        "curl -s '{base}/api/episodes/changes?since=0'",
    ),
    read(
        Op::Episode,
        "/api/episodes/{episode_id}",
        "The full episode record with every pipeline run and the name votes",
        Takes::Nothing,
        "Object",
        &[404],
        "curl -s {base}/api/episodes/ep_abcdefghij",
    ),
    read(
        Op::Transcript,
        "/api/episodes/{episode_id}/transcript",
        "The canonical transcript, optionally narrowed; the filters are echoed",
        Takes::Query,
        "TranscriptView",
        &[400, 404],
        "curl -s '{base}/api/episodes/ep_abcdefghij/transcript?from=60&to=120'",
    ),
    read(
        Op::Speakers,
        "/api/episodes/{episode_id}/speakers",
        "Per-speaker statistics; share is of speech time, not of the window",
        Takes::Query,
        "SpeakersView",
        &[400, 404],
        "curl -s {base}/api/episodes/ep_abcdefghij/speakers",
    ),
    Route {
        op: Op::DecideSpeaker,
        method: Method::Put,
        path: "/api/episodes/{episode_id}/speakers/{label}",
        summary: "Name a speaker as a person (keys with the editor role); shown at once to requests with a \
                  key and to other readers within a second, never overwritten by any identification \
                  source, synced to git by `builder sync`",
        key: true,
        takes: Takes::Json("SpeakerDecision"),
        ok: (200, Answer::Json("Object")),
        also: &[],
        errors: &[400, 401, 403, 404, 413, 415, 422, 429],
        example: "curl -s -X PUT -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' \
                  --data '{\"name\":\"Jerod Santo\",\"note\":\"introduces himself at 0:04\"}' \
                  {base}/api/episodes/ep_abcdefghij/speakers/A",
    },
    read(
        Op::PhraseSearch,
        "/api/search",
        "Phrase search over every transcript, with speakers; `speaker` alone lists what a person said",
        Takes::Query,
        "QuoteSearch",
        &[400],
        "curl -s '{base}/api/search?q=open+source'",
    ),
    Route {
        op: Op::Mcp,
        method: Method::Post,
        path: "/mcp",
        summary: "The MCP server (streamable HTTP, stateless): one JSON-RPC message per POST, JSON answers; \
                  notifications get 202. Write tools need the bearer key; read tools do not",
        key: false,
        takes: Takes::Json("JsonRpc"),
        ok: (200, Answer::Json("JsonRpcAnswer")),
        also: &[(202, Answer::Empty, "a notification or response was accepted")],
        errors: &[400, 403, 404, 413, 415],
        example: "curl -s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' {base}/mcp",
    },
    Route {
        op: Op::Kitchen,
        method: Method::Get,
        path: "/kitchen",
        summary: "The kitchen page (HTML): sign in, make or revoke API keys, ask for an episode",
        key: false,
        takes: Takes::Query,
        ok: (200, Answer::Html),
        also: &[],
        errors: &[400],
        example: "open {base}/kitchen",
    },
    Route {
        op: Op::KitchenGithubLogin,
        method: Method::Get,
        path: "/kitchen/login/github",
        summary: "Starts signing in with GitHub (a redirect to GitHub; 404 where GitHub sign-in is not configured)",
        key: false,
        takes: Takes::Nothing,
        ok: (302, Answer::Redirect),
        also: &[],
        errors: &[404],
        example: "",
    },
    Route {
        op: Op::KitchenGithubCallback,
        method: Method::Get,
        path: "/kitchen/callback/github",
        summary: "Where GitHub sends the person back after signing in (a redirect to the kitchen)",
        key: false,
        takes: Takes::Query,
        ok: (303, Answer::Redirect),
        also: &[(200, Answer::Html, "the kitchen page, saying why the sign-in did not complete (`error`)")],
        errors: &[400, 403, 404, 429],
        example: "",
    },
    Route {
        op: Op::KitchenDevLogin,
        method: Method::Post,
        path: "/kitchen/login/dev",
        summary: "Signs in locally without GitHub (development only; 404 elsewhere)",
        key: false,
        takes: Takes::Form(&["handle"]),
        ok: (303, Answer::Redirect),
        // A person's browser: a handle that cannot be one is shown on the kitchen page, with why.
        also: &[(400, Answer::Html, "the kitchen page, saying why the handle cannot be one")],
        errors: &[403, 404, 413, 429],
        example: "",
    },
    form(Op::KitchenLogout, "/kitchen/logout", "Ends the kitchen session", &[]),
    // The new key is shown once, in this answer: a redirect would have to keep it somewhere to show
    // it after, so the kitchen page is the answer itself.
    Route {
        op: Op::KitchenNewKey,
        method: Method::Post,
        path: "/kitchen/keys",
        summary: "Makes a new API key: the kitchen page, showing the key once (and only then)",
        key: false,
        takes: Takes::Form(&["label"]),
        ok: (200, Answer::Html),
        also: &[],
        errors: FORM_ERRORS,
        example: "",
    },
    form(Op::KitchenRevokeKey, "/kitchen/keys/{key_id}/revoke", "Revokes one of your keys", &[]),
    // Recipes in from Cooklang or schema.org: a draft to check, then saved.
    Route {
        op: Op::KitchenImport,
        method: Method::Post,
        path: "/kitchen/import",
        summary: "Turns a pasted Cooklang text or schema.org JSON-LD into a draft recipe, shown on the kitchen \
                  page with every problem to fix before saving it",
        key: false,
        takes: Takes::Form(&["format", "source", "lang"]),
        ok: (200, Answer::Html),
        also: &[],
        errors: &[400, 403, 413],
        example: "",
    },
    Route {
        op: Op::KitchenSaveDraft,
        method: Method::Post,
        path: "/kitchen/recipes",
        summary: "Saves a checked draft as your recipe, through the same create as `POST /api/recipes` (a \
                  redirect to its page)",
        key: false,
        takes: Takes::Form(&["recipe"]),
        ok: (303, Answer::Redirect),
        also: &[(200, Answer::Html, "the kitchen page, showing the draft's problems")],
        errors: &[400, 403, 413, 429],
        example: "",
    },
    // Refused, a person's browser gets a page saying why.
    form_refused_as_pages(
        Op::KitchenRequestEpisode,
        "/kitchen/episodes",
        "Asks for the episode at an address, through the same intake as `POST /api/episodes` (a \
         redirect to the quote page that waits for it, or to the kitchen)",
        &["source_url", "quote"],
        &[
            (200, Answer::Html, "the kitchen page, saying where the job stands (no quote to go back to)"),
            (400, Answer::Html, "the form does not parse"),
            (403, Answer::Html, "no session, or a stale CSRF token"),
            (413, Answer::Html, "the form is too large"),
            (422, Answer::Html, "the kitchen page, saying why the address is refused, the address kept"),
            (429, Answer::Html, "too many writes, or past the day's transcription budget"),
        ],
    ),
    page(
        Op::QuotesPage,
        "/quotes",
        "Check a quote (HTML): who said it, when, how sure we are, with a player at the second; a GET form whose answer is a shareable address",
        Takes::Query,
        "open '{base}/quotes?quote=open+source+is+a+gift'",
    ),
    file(
        "/episodes/{file}.json",
        "An episode's record with every run (`ep_….json`), or a list the build publishes (`by-url.json`, `review.json`)",
        Answer::Json("Object"),
    ),
    page(
        Op::EpisodePage,
        "/episodes/{episode_id}",
        "An episode's page (HTML): its transcript with a `#t=<second>` anchor on every turn, who spoke how much, its runs, licence and credit",
        Takes::Nothing,
        "open {base}/episodes/ep_abcdefghij#t=65",
    ),
    page(
        Op::RunsPage,
        "/episodes/{episode_id}/compare",
        "Two transcription runs of an episode side by side (HTML): where their words and their speaker turns differ",
        Takes::Query,
        "open '{base}/episodes/ep_abcdefghij/compare?a=assemblyai-best&b=whisperx-3.1'",
    ),
    page(
        Op::ShowPage,
        "/shows/{show_id}",
        "A show's page (HTML): its episodes, newest first, and its licence",
        Takes::Query,
        "open {base}/shows/kitchen-table",
    ),
    page(
        Op::SearchPage,
        "/search",
        "Search transcripts (HTML): a phrase, a speaker or both, each hit linked to its moment",
        Takes::Query,
        "open '{base}/search?q=open+source'",
    ),
    Route {
        op: Op::ReviewPage,
        method: Method::Get,
        path: "/kitchen/review",
        summary: "The editors' review queue (HTML, signed in with the editor role): every speaker name not confident or decided, most cited first",
        key: false,
        takes: Takes::Query,
        ok: (200, Answer::Html),
        also: &[(303, Answer::Redirect, "not signed in: to the kitchen")],
        errors: &[400, 403],
        example: "open {base}/kitchen/review",
    },
    // Refused, the editor gets a page: the queue again with the problem at its entry and what was
    // typed kept, or, without a session, the problem in words.
    form_refused_as_pages(
        Op::ReviewDecide,
        "/kitchen/review",
        "An editor names a speaker from the review queue: the same decision, checks and record as PUT /api/episodes/{id}/speakers/{label}",
        &["episode", "label", "name", "confirm", "note"],
        &[
            (400, Answer::Html, "the form does not parse"),
            (403, Answer::Html, "no session, a stale CSRF token, or not an editor"),
            (404, Answer::Html, "no such episode or label: the queue, saying so"),
            (413, Answer::Html, "the form is too large"),
            (422, Answer::Html, "the name is refused: the queue, with what was typed"),
            (429, Answer::Html, "too many decisions: the queue, with what was typed"),
        ],
    ),
    file("/", "The home page (HTML)", Answer::Html),
    file("/openapi.json", "This description of the HTTP API (OpenAPI 3.1)", Answer::Json("Object")),
    file("/llms.txt", "This service described for language models (llmstxt.org)", Answer::Text),
    file("/llms-full.txt", "llms.txt with every route and every MCP tool in full", Answer::Text),
    file(
        "/recipes.jsonl",
        "Every recipe, one JSON document a line (CC0-1.0 unless `licence` says otherwise)",
        Answer::JsonLines,
    ),
    file(
        "/episodes.jsonl",
        "Every canonical transcript, one episode a line, each with its licence (Changelog: CC BY-SA 4.0)",
        Answer::JsonLines,
    ),
    file(
        "/datapackage.json",
        "The open data described as a Frictionless Data Package",
        Answer::Json("Object"),
    ),
    file("/SHA256SUMS", "The SHA-256 of every published file", Answer::Text),
    file("/facets.json", "How many recipes each search filter matches", Answer::Json("Object")),
    file("/shows.json", "Every show, as built", Answer::Json("Array")),
    file("/episodes.json", "Every episode's summary, as built", Answer::Json("Array")),
    file("/slugs.json", "Every published recipe's slug and version", Answer::Json("Array")),
    file("/schemas/{name}.json", "The JSON Schema of a published document", Answer::Json("Object")),
];

/// What a request matched.
#[derive(Debug, Clone)]
pub enum Found {
    /// The route and its path parameters, by name.
    Route(&'static Route, Vec<(&'static str, String)>),
    /// The path is a route's, but not for this method: the methods it answers (`Allow`; a `GET`
    /// answers `HEAD` too, which goes without saying).
    NotAllowed(String),
    /// No route has this path: for `GET`, a built file may (`Op::BuiltFile`); otherwise nothing.
    None,
}

/// The route of a request. An unknown `GET` path under `/api/` is no built file.
pub fn find(method: &str, path: &str) -> Found {
    let mut allowed: Vec<&str> = Vec::new();
    for route in ROUTES {
        let Some(params) = matches(route.path, path) else { continue };
        if route.method.answers(method) {
            return Found::Route(route, params);
        }
        // A route for `GET` answers `HEAD` too, so `Allow` names both.
        let names: &[&str] =
            if route.method == Method::Get { &["GET", "HEAD"] } else { &[route.method.name()] };
        for name in names {
            if !allowed.contains(name) {
                allowed.push(name);
            }
        }
    }
    if !allowed.is_empty() {
        return Found::NotAllowed(allowed.join(", "));
    }
    Found::None
}

/// The path parameters of `path` under `template`, or `None` when it does not match.
pub fn matches(template: &'static str, path: &str) -> Option<Vec<(&'static str, String)>> {
    let mut names = template.split('/');
    let mut values = path.split('/');
    let mut params = Vec::new();
    loop {
        match (names.next(), values.next()) {
            (None, None) => return Some(params),
            (Some(name), Some(value)) => {
                if let Some(inner) = name.strip_prefix('{') {
                    let (param, suffix) = inner.split_once('}')?;
                    let value = value.strip_suffix(suffix)?;
                    if value.is_empty() {
                        return None;
                    }
                    params.push((param, value.to_string()));
                } else if name != value {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// The names of a template's path parameters, in order.
pub fn path_params(template: &str) -> Vec<&str> {
    template.split('{').skip(1).filter_map(|rest| rest.split('}').next()).collect()
}

/// The JSON Schema of a route's parameters (path and query), generated with `settings`: the
/// operation's input type. `None` for a route that takes no query.
#[cfg(feature = "schema")]
pub fn parameters_schema(op: Op, settings: &schemars::generate::SchemaSettings) -> Option<serde_json::Value> {
    use super::*;
    fn schema<T: schemars::JsonSchema>(settings: &schemars::generate::SchemaSettings) -> serde_json::Value {
        let root = settings.clone().into_generator().into_root_schema_for::<T>();
        serde_json::to_value(root).expect("schemas serialise")
    }
    Some(match op {
        Op::SearchRecipes => schema::<RecipeSearch>(settings),
        Op::RecipeJson | Op::RecipePage => schema::<RecipeView>(settings),
        Op::RecipeCooklang => schema::<RecipeCooklang>(settings),
        Op::ForkRecipe | Op::ChangeRecipe | Op::AiChange => schema::<RecipeSlug>(settings),
        Op::DietVersion => schema::<DietVersion>(settings),
        Op::RecipeHistory => schema::<HistoryQuery>(settings),
        Op::Changes | Op::SpeakerDecisions | Op::IntakeEpisodes => schema::<FeedQuery>(settings),
        Op::Attribute => schema::<QuoteAttribution>(settings),
        Op::Episodes => schema::<EpisodeList>(settings),
        Op::Transcript => schema::<TranscriptQuery>(settings),
        Op::Speakers => schema::<SpeakerStats>(settings),
        Op::PhraseSearch => schema::<TranscriptSearch>(settings),
        Op::KitchenGithubCallback => schema::<GithubCallback>(settings),
        Op::QuotesPage => schema::<QuoteCheck>(settings),
        Op::RunsPage => schema::<RunComparison>(settings),
        Op::ShowPage => schema::<ShowView>(settings),
        Op::SearchPage => schema::<SearchPageQuery>(settings),
        Op::ReviewPage => schema::<ReviewQuery>(settings),
        Op::Kitchen => schema::<QuoteCheck>(settings),
        // The rest take no query; a path parameter without a schema is a string, and
        // `every_route_taking_a_query_has_its_inputs_schema` holds this list to the table's `takes`.
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
