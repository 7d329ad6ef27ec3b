//! The Commonplace Worker: every route in one table (`domain::api::routes`, read by [`router`] and
//! by the builder's `openapi.json`); handlers parse, call `domain`, render.
//!
//! The handlers are [`routes`], one module per family of routes. What they stand on sits beside it:
//! [`http`], [`headers`] and [`error`] (requests and answers), [`auth`] (keys, limits, clock),
//! [`store`] (every D1 statement), [`overlay`] and [`waiting`] (API-written recipes before a
//! rebuild), [`decisions`] (editors' speaker names before a rebuild), [`idempotency`], [`provider`]
//! (the site's AI), the built files: [`assets`], [`packs`], [`index`], and [`web`] (the pages'
//! templates, cookies, sessions, CSRF checks and forms).
//!
//! Static files (recipe JSON, pages, search index, dumps) are Workers static assets built by `builder`;
//! the Worker runs first for every request so that headers, errors and (later) the D1 overlay are
//! decided in one place. A request for a host that is neither the site's nor loopback is refused
//! before any route runs ([`http::check_host`]). Central types: [`error::ApiError`], the one error
//! type, mapped to RFC 9457 in [`error::ApiError::into_response`].

mod assets;
mod auth;
mod decisions;
mod error;
mod headers;
mod http;
mod idempotency;
mod index;
mod intake;
mod live;
mod overlay;
mod packs;
mod provider;
mod routes;
mod store;
mod waiting;
mod web;

use domain::api::routes::{Found, Op};
use domain::api::{self};
use worker::{
    Context, Env, MessageBatch, MessageExt, Method, QueueRetryOptionsBuilder, Request, Response,
    ScheduleContext, ScheduledEvent, event,
};

use crate::error::ApiError;
use crate::live::Live;
use crate::routes::{
    ai, cooking, diet, feed, intake as intake_routes, kitchen, mcp, pages, quotes, recipes, review, speakers,
    writes,
};

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let instance = req.path();
    let method = http::routed_method(&req);
    let if_none_match = req.headers().get("If-None-Match").ok().flatten();
    let wants_page = http::wants_page(&req);
    let answer = match http::check_host(&req, &env) {
        Ok(()) => router(req, &env).await,
        Err(refused) => Err(refused),
    };
    let response = match answer {
        Ok(response) => response,
        Err(ApiError::NotFound(detail)) if wants_page => pages::not_found(&detail),
        Err(err) if wants_page && api::routes::PAGE_REFUSALS.contains(&err.in_words().0) => {
            pages::problem(err, &instance)
        }
        Err(err) => err.into_response(&instance),
    };
    let mut response = http::not_modified_if_matched(&method, if_none_match.as_deref(), response);
    headers::every_answer(response.headers_mut());
    Ok(response)
}

/// The intake's queue: each message is one job (`intake::take_in`). A passing failure of ours (D1,
/// R2) sends the message back to be tried again 10 s later; everything else ends the job. A message
/// the queue gives up on leaves its job stalled, and asking for the address again queues it anew.
#[event(queue)]
async fn queue(batch: MessageBatch<intake::Message>, env: Env, _ctx: Context) -> worker::Result<()> {
    for message in batch.messages()? {
        let done = match message.body() {
            intake::Message::Job(id) => intake::take_in(&env, id).await,
            intake::Message::Feed { show, url } => intake::follow(&env, show, url).await,
            intake::Message::Feeds { from, to } => intake::follow_some(&env, *from, *to).await,
        };
        match done {
            Ok(()) => message.ack(),
            Err(err) => {
                worker::console_error!("intake {:?}: {err:?}", message.body());
                message.retry_with_options(&QueueRetryOptionsBuilder::new().with_delay_seconds(10).build());
            }
        }
    }
    Ok(())
}

/// The cron (every 15 minutes, `[triggers]` in `wrangler.toml`): each followed feed goes on the
/// intake's queue (`intake::follow_all`).
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    match intake::follow_all(&env).await {
        Ok(n) => worker::console_log!("queued {n} followed feed(s)"),
        Err(err) => worker::console_error!("following feeds: {err:?}"),
    }
}

/// Every route of the service: the request is matched against `domain::api::routes::ROUTES` (the
/// table `openapi.json` is written from), and each [`Op`] runs its handler.
async fn router(req: Request, env: &Env) -> Result<Response, ApiError> {
    let method = http::routed_method(&req);
    if method == Method::Options {
        return http::preflight();
    }
    let path = req.path();
    let (route, params) = match domain::api::routes::find(method.as_ref(), &path) {
        Found::Route(route, params) => (route, params),
        Found::NotAllowed(allowed) => return Err(ApiError::MethodNotAllowed(allowed)),
        Found::None if path.starts_with("/api/") => {
            return Err(ApiError::NotFound(format!("no API route {path}")));
        }
        // A path that is no route is 404 whatever the method, as its GET is; only a built file, which
        // GET answers, makes another method a 405.
        Found::None if !matches!(method, Method::Get | Method::Head) => {
            return Err(if assets::exists(env, &path).await? {
                ApiError::MethodNotAllowed("GET, HEAD".into())
            } else {
                ApiError::NotFound(format!("nothing at {path}"))
            });
        }
        Found::None => return built_file(req, env).await,
    };
    let param = |name: &str| params.iter().find(|(n, _)| *n == name).map_or("", |(_, value)| value.as_str());
    match route.op {
        Op::SearchRecipes => {
            recipes::search(&req, env, http::input::<api::RecipeSearch>(&req, &params)?).await
        }
        Op::CreateRecipe => writes::create(req, env).await,
        // Scaled, converted or as Cooklang: what cooks expect.
        Op::RecipeJson => {
            let api::RecipeAsked { slug, request } = http::input::<api::RecipeView>(&req, &params)?;
            cooking::recipe_json(req, env, &slug, request).await
        }
        Op::RecipeCooklang => {
            cooking::recipe_cook(&req, env, http::input::<api::RecipeCooklang>(&req, &params)?).await
        }
        Op::RecipePage => {
            let api::RecipeAsked { slug, request } = http::page_input::<api::RecipeView>(&req, &params)?;
            recipes::recipe_page(req, env, &slug, request).await
        }
        Op::RecipeCard => recipes::card_svg(req, env, &format!("{}.svg", param("card"))).await,
        Op::RecipeCardPng => match domain::recipes::card::undrawn(param("card")) {
            Some(svg) => recipes::moved_to(&svg),
            None => built_file(req, env).await,
        },
        Op::ChangeRecipe => writes::change(req, env, param("slug")).await,
        Op::ForkRecipe => writes::fork(req, env, param("slug")).await,
        Op::RecipeHistory => feed::history(env, http::input::<api::HistoryQuery>(&req, &params)?).await,
        Op::Changes => feed::changes(env, http::input::<api::FeedQuery>(&req, &params)?).await,
        Op::Me => writes::me(&req, env).await,
        // The site's AI.
        Op::AiWrite => ai::write_route(req, env).await,
        Op::AiChange => ai::change_route(req, env, param("slug")).await,
        Op::DietVersion => diet::route(req, env, param("slug"), param("kind")).await,
        // Quote attribution and speaker names set by editors.
        Op::Attribute => {
            let input = http::input::<api::QuoteAttribution>(&req, &params)?;
            quotes::attribute(env, input, &Live::of(&req, env).await?).await
        }
        Op::Shows => quotes::shows(env).await,
        Op::Episodes => quotes::episodes(env, http::input::<api::EpisodeList>(&req, &params)?).await,
        Op::SpeakerDecisions => speakers::changes(env, http::input::<api::FeedQuery>(&req, &params)?).await,
        Op::Episode => quotes::episode(env, param("episode_id"), &Live::of(&req, env).await?).await,
        Op::Transcript => {
            let input = http::input::<api::TranscriptQuery>(&req, &params)?;
            quotes::transcript(env, input, &Live::of(&req, env).await?).await
        }
        Op::Speakers => {
            let input = http::input::<api::SpeakerStats>(&req, &params)?;
            quotes::speakers(env, input, &Live::of(&req, env).await?).await
        }
        Op::PhraseSearch => {
            let input = http::input::<api::TranscriptSearch>(&req, &params)?;
            quotes::search(env, input, &Live::of(&req, env).await?).await
        }
        Op::DecideSpeaker => speakers::decide(req, env, param("episode_id"), param("label")).await,
        // Episodes by their address: the queue consumer below does the work.
        Op::RequestEpisode => intake_routes::request(req, env).await,
        Op::IntakeJob => intake_routes::status(env, param("job_id")).await,
        Op::IntakeTranscribed => intake::transcription::callback_route(req, env, param("job_id")).await,
        Op::IntakeEpisodes => {
            intake_routes::taken_in(env, http::input::<api::FeedQuery>(&req, &params)?).await
        }
        // Agents: one JSON-RPC message per POST; no SSE stream to GET.
        Op::Mcp => mcp::post(req, env).await,
        Op::Kitchen => {
            let ask = http::page_input::<api::QuoteCheck>(&req, &params)?;
            kitchen::home(req, env, ask).await
        }
        Op::KitchenRequestEpisode => kitchen::episodes::request_episode(req, env).await,
        Op::KitchenGithubLogin => kitchen::sign_in::github_login(req, env).await,
        Op::KitchenGithubCallback => {
            let sign_in = http::input::<api::GithubCallback>(&req, &params)?;
            kitchen::sign_in::github_callback(req, env, sign_in).await
        }
        Op::KitchenDevLogin => kitchen::sign_in::dev_login(req, env).await,
        Op::KitchenLogout => kitchen::sign_in::logout(req, env).await,
        Op::KitchenNewKey => kitchen::keys::new_key(req, env).await,
        Op::KitchenRevokeKey => kitchen::keys::revoke_key(req, env, param("key_id")).await,
        // Recipes in from Cooklang or schema.org.
        Op::KitchenImport => kitchen::drafts::import(req, env).await,
        Op::KitchenSaveDraft => kitchen::drafts::save_draft(req, env).await,
        // The quote service's pages, and the editors' review queue.
        Op::QuotesPage => pages::quote_page(env, http::page_input::<api::QuoteCheck>(&req, &params)?).await,
        Op::EpisodePage => pages::episode_page(env, param("episode_id")).await,
        Op::RunsPage => pages::runs_page(env, http::page_input::<api::RunComparison>(&req, &params)?).await,
        Op::ShowPage => pages::show_page(env, http::page_input::<api::ShowView>(&req, &params)?).await,
        Op::SearchPage => {
            pages::search_page(env, http::page_input::<api::SearchPageQuery>(&req, &params)?).await
        }
        Op::ReviewPage => {
            let asked = http::page_input::<api::ReviewQuery>(&req, &params)?;
            review::page(req, env, asked).await
        }
        Op::ReviewDecide => review::decide(req, env).await,
        Op::BuiltFile => built_file(req, env).await,
    }
}

/// A built file; under `/episodes/`, an episode the intake published and no build has yet answers as
/// the build would (`live::episodes::download`).
async fn built_file(req: Request, env: &Env) -> Result<Response, ApiError> {
    let path = req.path();
    match assets::serve(req, env).await {
        Err(ApiError::NotFound(detail)) if path.starts_with("/episodes/") => {
            live::episodes::download(env, &path).await?.ok_or(ApiError::NotFound(detail))
        }
        answer => answer,
    }
}
