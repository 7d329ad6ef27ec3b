//! How a refused tool call reads to an agent: a message naming its next step, from the typed refusal
//! the edge's error maps to (never from the problem JSON read back).

use serde_json::Value;

use super::tools::ToolSpec;
use crate::Diagnostic;

/// Why an operation refused, in the terms an agent acts on. The edge maps its error type to this.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Parameters or arguments with problems, each naming its field.
    BadArguments(Vec<Diagnostic>),
    /// A document with problems, each naming its field.
    Invalid(Vec<Diagnostic>),
    /// No key, or one that is unknown or revoked.
    NoKey,
    /// Someone else's recipe.
    NotYours,
    NotFound,
    /// A stale version, or a write that lost a race.
    Stale,
    RateLimited,
    /// No AI provider is configured.
    AiUnavailable,
    /// The AI provider failed: no answer, a broken one, or not in time.
    AiFailed,
    /// The AI answered, and the checks refused the answer (a diet version that is not gluten-free,
    /// a document with problems), after one repair: each remaining problem.
    AiAnswerRefused(Vec<Diagnostic>),
    /// Anything else: the server's own failure.
    Failed,
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool's structured answer (a JSON object matching its output schema).
    Done(Value),
    /// A failure the agent can act on: what to do next, and the problem details (RFC 9457 fields).
    Failed { message: String, problem: Value },
}

/// Turns a refused call into a message that tells the agent its next step. `detail` says what
/// happened; `problem` is the RFC 9457 body the HTTP route would have answered, passed on as it is;
/// `slug` is the recipe the call was about, if any.
pub fn failure(
    tool: &ToolSpec,
    slug: Option<&str>,
    refusal: &Refusal,
    detail: &str,
    problem: Value,
) -> ToolOutcome {
    let name = tool.name;
    let slug = slug.unwrap_or("the recipe");
    let message = match refusal {
        Refusal::NoKey => format!(
            "{name} needs an API key ({detail}). A person signs in at /kitchen, makes a key there, and \
             configures this MCP client to send it as `Authorization: Bearer <key>`; reading tools work without one."
        ),
        Refusal::NotYours => format!(
            "`{slug}` is not yours, so {name} may not change it. Call fork_recipe with {{\"slug\": \"{slug}\"}} \
             to get your own copy, then call {name} on the copy's slug."
        ),
        Refusal::NotFound if tool.name.contains("recipe") || tool.name == "make_diet_version" => {
            format!("{detail}. Find recipe slugs with search_recipes.")
        }
        Refusal::NotFound => format!("{detail}. Find episodes and their ids with list_episodes."),
        Refusal::Stale => format!(
            "{detail}. Read `{slug}` again with get_recipe, apply your change to that version, and send its \
             `version`."
        ),
        Refusal::BadArguments(problems) | Refusal::Invalid(problems) => {
            let listed: Vec<String> = problems.iter().map(Diagnostic::to_string).collect();
            let listed = if listed.is_empty() { detail.to_string() } else { listed.join("; ") };
            format!(
                "The arguments have problems: {listed}. Fix all of them (see the inputSchema of {name} in \
                 tools/list) and call {name} again."
            )
        }
        Refusal::RateLimited => format!(
            "Too many calls: {detail}. Every key of an account shares its limits, so wait, then call {name} again."
        ),
        Refusal::AiUnavailable => format!(
            "{detail}. The AI is not available on this server now; write or change the recipe yourself with \
             create_recipe or update_recipe."
        ),
        Refusal::AiFailed => format!("The AI provider failed ({detail}). Call {name} again later."),
        Refusal::AiAnswerRefused(problems) => {
            let listed: Vec<String> = problems.iter().map(Diagnostic::to_string).collect();
            format!(
                "The AI answered, but the checks refused its answer (after one repair): {}. Nothing was stored. \
                 Call {name} again (the model may answer differently), or write \
                 the recipe yourself with create_recipe or update_recipe.",
                if listed.is_empty() { detail.to_string() } else { listed.join("; ") }
            )
        }
        Refusal::Failed => format!("The server failed ({detail}). Call {name} again later."),
    };
    ToolOutcome::Failed { message, problem }
}
