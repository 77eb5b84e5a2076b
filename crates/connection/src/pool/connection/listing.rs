//! A server's tools, resources and prompts: listed page by page within bounds of items and bytes,
//! malformed entries dropped and counted; the first listing taken once for all who wait for it.

use super::Connection;
use crate::pool::nesting::LEFT_OUT_FIELD;
use crate::pool::RequestError;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Guards against servers that never stop paginating.
const MAX_PAGES: usize = 1000;

/// The tools, resources and prompts a server listed. Malformed entries are dropped, and counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    /// `resources/templates/list`.
    pub templates: Vec<Value>,
    pub prompts: Vec<Value>,
    pub dropped: usize,
    /// Set when the server listed more than the bounds keep (what is kept is the start).
    pub cut: Option<Cut>,
    /// Entries left out because they could not be read, one line each saying which and why.
    pub left_out: Vec<String>,
}

/// How much of a server's listing is kept, and how long each page may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListBounds {
    pub timeout: Duration,
    /// Tools (and resources, and prompts) at most.
    pub items: usize,
    /// Bytes of tools, resources and prompts together (as JSON) at most.
    pub bytes: usize,
}

impl ListBounds {
    /// The most tools (and resources, and prompts) of one server ever kept.
    pub const MOST_ITEMS: usize = 5_000;
    /// The most bytes of one server's tools, resources and prompts ever kept.
    pub const MOST_BYTES: usize = 16 * 1024 * 1024;

    /// The widest bounds, each page within `timeout`.
    pub fn widest(timeout: Duration) -> ListBounds {
        ListBounds {
            timeout,
            items: ListBounds::MOST_ITEMS,
            bytes: ListBounds::MOST_BYTES,
        }
    }
}

/// The bound a listing ran into; no more pages were asked for after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    Items(usize),
    Bytes(usize),
}

impl Connection {
    pub fn listing(&self) -> Arc<Listing> {
        self.listing.lock().clone()
    }

    /// The connection's first listing: taken by the first caller, awaited by the others (a
    /// failed one is tried again by the next caller).
    pub async fn listed(&self, bounds: &ListBounds) -> Result<Arc<Listing>, RequestError> {
        self.first_listing
            .get_or_try_init(|| {
                self.first_listing_asked
                    .lock()
                    .get_or_insert_with(Instant::now);
                self.relist(bounds)
            })
            .await
            .cloned()
    }

    pub fn is_listed(&self) -> bool {
        self.first_listing.initialized()
    }

    /// The first listing, once it has been taken.
    pub fn first_listing(&self) -> Option<Arc<Listing>> {
        self.first_listing.get().cloned()
    }

    /// Whether the first listing shows a change announced at `at`: it was asked for after
    /// that, or has not been asked for yet (whoever takes it will).
    pub fn first_listing_covers(&self, at: Instant) -> bool {
        self.first_listing_asked
            .lock()
            .is_none_or(|asked| asked >= at)
    }

    /// Lists the server again and keeps the result as [`Connection::listing`].
    pub async fn relist(&self, bounds: &ListBounds) -> Result<Arc<Listing>, RequestError> {
        // Boxed once here: four lists paged at once make a large future (~38 KB), which every
        // future that lists a server would otherwise carry.
        let listing = Arc::new(Box::pin(self.list(bounds)).await?);
        *self.listing.lock() = listing.clone();
        Ok(listing)
    }

    /// Lists tools, and resources and prompts when the server has them, all at once, within
    /// `bounds` (one budget of bytes for the three). Only a failed tool listing fails: the other
    /// lists are then just empty.
    async fn list(&self, bounds: &ListBounds) -> Result<Listing, RequestError> {
        let budget = Budget::new(bounds);
        let optional = |wanted: bool, method: &'static str, key: &'static str, valid| {
            let budget = &budget;
            async move {
                match wanted {
                    true => self
                        .list_all(method, key, bounds.timeout, valid, budget)
                        .await
                        .unwrap_or_default(),
                    false => Paged::default(),
                }
            }
        };
        let (tools, resources, templates, prompts) = tokio::join!(
            self.list_all("tools/list", "tools", bounds.timeout, valid_tool, &budget),
            optional(
                self.has_resources,
                "resources/list",
                "resources",
                valid_resource
            ),
            optional(
                self.has_resources,
                "resources/templates/list",
                "resourceTemplates",
                valid_template
            ),
            optional(self.has_prompts, "prompts/list", "prompts", valid_prompt),
        );
        let tools = tools?;
        let left_out = [&tools, &resources, &templates, &prompts]
            .into_iter()
            .flat_map(|paged| paged.left_out.iter().cloned())
            .collect();
        Ok(Listing {
            cut: tools
                .cut
                .or(resources.cut)
                .or(templates.cut)
                .or(prompts.cut),
            dropped: tools.dropped + resources.dropped + templates.dropped + prompts.dropped,
            left_out,
            tools: tools.items,
            resources: resources.items,
            templates: templates.items,
            prompts: prompts.items,
        })
    }

    /// Boxed for the reason `Connection::request` gives.
    fn list_all<'a>(
        &'a self,
        method: &'a str,
        key: &'a str,
        timeout: Duration,
        valid: fn(&Value) -> Option<&str>,
        budget: &'a Budget,
    ) -> BoxFuture<'a, Result<Paged, RequestError>> {
        Box::pin(self.list_pages(method, key, timeout, valid, budget))
    }

    async fn list_pages(
        &self,
        method: &str,
        key: &str,
        timeout: Duration,
        valid: fn(&Value) -> Option<&str>,
        budget: &Budget,
    ) -> Result<Paged, RequestError> {
        let mut paged = Paged::default();
        let (mut names, mut seen_cursors) = (HashSet::new(), HashSet::new());
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .as_ref()
                .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
            let mut page = self.request(method, params, self.plain(timeout)).await?;
            let left_out = page
                .get("_meta")
                .and_then(|meta| meta.get(LEFT_OUT_FIELD))
                .and_then(Value::as_array);
            paged.left_out.extend(
                left_out
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            let items = match page.get_mut(key).map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => vec![],
            };
            for item in items {
                match valid(&item) {
                    Some(name) if names.insert(name.to_string()) => {
                        if let Err(cut) = budget.charge(paged.items.len(), &item) {
                            paged.cut = Some(cut);
                            return Ok(paged);
                        }
                        paged.items.push(item);
                    }
                    _ => paged.dropped += 1,
                }
            }
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_string);
            match &cursor {
                Some(c) if seen_cursors.insert(c.clone()) => continue,
                _ => break,
            }
        }
        Ok(paged)
    }
}

/// One list's items as far as the bounds allowed.
#[derive(Default)]
struct Paged {
    items: Vec<Value>,
    dropped: usize,
    cut: Option<Cut>,
    /// Entries that could not be read (see `nesting`), one line each.
    left_out: Vec<String>,
}

/// The bounds of one listing: items per list, and bytes for all its lists together.
struct Budget {
    items: usize,
    bytes: usize,
    spent: AtomicUsize,
}

impl Budget {
    fn new(bounds: &ListBounds) -> Budget {
        Budget {
            items: bounds.items,
            bytes: bounds.bytes,
            spent: AtomicUsize::new(0),
        }
    }

    /// Counts `item`, the next after `kept` of its list, unless it passes a bound.
    fn charge(&self, kept: usize, item: &Value) -> Result<(), Cut> {
        if kept >= self.items {
            return Err(Cut::Items(self.items));
        }
        let size = json_size(item);
        let spent = self.spent.fetch_add(size, Ordering::SeqCst) + size;
        if spent > self.bytes {
            return Err(Cut::Bytes(self.bytes));
        }
        Ok(())
    }
}

/// The length of `value` as compact JSON, without building the text.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn valid_tool(tool: &Value) -> Option<&str> {
    let name = tool.get("name")?.as_str().filter(|n| !n.is_empty())?;
    tool.get("inputSchema")
        .is_none_or(Value::is_object)
        .then_some(name)
}

fn valid_prompt(prompt: &Value) -> Option<&str> {
    prompt.get("name")?.as_str().filter(|n| !n.is_empty())
}

fn valid_template(template: &Value) -> Option<&str> {
    template.get("name")?.as_str()?;
    template
        .get("uriTemplate")?
        .as_str()
        .filter(|u| !u.is_empty())
}

fn valid_resource(resource: &Value) -> Option<&str> {
    resource.get("name")?.as_str()?;
    resource.get("uri")?.as_str().filter(|u| !u.is_empty())
}

#[cfg(test)]
mod tests;
