//! Pages cut by bytes as well as by count: every feed and list the Worker answers stops a page once
//! its items reach [`PAGE_BYTES`] of JSON, whatever `limit` asked for, and says where to go on.
//!
//! A count alone does not bound a page: one page of 1,000 change-feed items was 96 MB, which
//! no client wants in one answer and no Worker should hold in memory. The rule: a page holds the
//! longest run of items whose serialized sizes add up to at most the budget, and always at least one
//! item (a single item larger than the budget is a page by itself), so a reader that follows the
//! continuation always moves on and meets every item exactly once.
//!
//! Feeds read from D1 know a lower bound of each item's size before reading the item (the stored
//! bytes of its large fields); [`rows_worth_reading`] uses it to read no row the page cannot hold.

use serde::{Deserialize, Serialize};

/// The byte budget of one page: 1 MiB of serialized items.
pub const PAGE_BYTES: usize = 1024 * 1024;

/// An opaque paging cursor: the offset of the next page, so pages stay stable for one index (or
/// one transcript, or one episode list).
pub fn encode_cursor(offset: usize) -> String {
    data_encoding::BASE64URL_NOPAD.encode(format!("o{offset}").as_bytes())
}

/// The offset an [`encode_cursor`] cursor holds; `None` for any other text.
pub fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = data_encoding::BASE64URL_NOPAD.decode(cursor.as_bytes()).ok()?;
    std::str::from_utf8(&bytes).ok()?.strip_prefix('o')?.parse().ok()
}

/// The length of `value` as compact JSON (what `serde_json::to_string` gives), counted without
/// building the text.
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Serialising our own types into a counter cannot fail: no IO error, no map with non-string keys.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// How many of the items, whose sizes these are, in order, one page holds: the longest run whose sizes
/// add up to at most `budget`, and never fewer than one when there is an item.
pub fn fitting(sizes: impl IntoIterator<Item = usize>, budget: usize) -> usize {
    let mut total = 0usize;
    let mut n = 0;
    for size in sizes {
        total = total.saturating_add(size);
        if n > 0 && total > budget {
            break;
        }
        n += 1;
    }
    n
}

/// Cuts `items` to what one page holds; `true` when the budget cut it (the rest is for the next page).
pub fn cut<T: Serialize>(items: &mut Vec<T>, budget: usize) -> bool {
    let n = fitting(items.iter().map(json_len), budget);
    let was_cut = n < items.len();
    items.truncate(n);
    was_cut
}

/// How many rows, in order, are worth reading for one page, knowing only a lower bound of each row's
/// serialized size: every row that [`fitting`] could keep on the true sizes, and perhaps a few more.
/// A row is read while the bounds before it add up to less than the budget (its true size is at
/// least its bound, so a row past that point cannot be on the page).
pub fn rows_worth_reading(lower_bounds: impl IntoIterator<Item = usize>, budget: usize) -> usize {
    let mut before = 0usize;
    let mut n = 0;
    for bound in lower_bounds {
        if n > 0 && before >= budget {
            break;
        }
        before = before.saturating_add(bound);
        n += 1;
    }
    n
}

/// Whether a feed page leaves items after it: it kept fewer than the `listed` rows the query found,
/// or the query found as many as it asked for (`limit`), so there may be more.
pub fn more_after(kept: usize, listed: usize, limit: usize) -> bool {
    kept < listed || listed == limit
}

/// An item of a feed: its position, which only grows along the feed.
pub trait Positioned {
    fn seq(&self) -> u64;
}

/// A page of one of the Worker's feeds (`/api/changes`, `/api/episodes/changes`,
/// `/api/intake/episodes`), as the Worker writes it and `builder sync` reads it: its items, the
/// `since` that fetches the next page (`None` when this page reached the end), and the feed's id for
/// a feed that has one (one per site's database, so a position is never read against another feed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedPage<T> {
    pub items: Vec<T>,
    pub next_since: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<String>,
}

impl<T: Positioned + Serialize> FeedPage<T> {
    /// The page of `items`, the first of the `listed` rows a query for at most `limit` found: cut to
    /// [`PAGE_BYTES`], going on after its last item when there may be more.
    pub fn of(mut items: Vec<T>, listed: usize, limit: usize) -> FeedPage<T> {
        cut(&mut items, PAGE_BYTES);
        let more = more_after(items.len(), listed, limit);
        let next_since = if more { items.last().map(T::seq) } else { None };
        FeedPage { items, next_since, feed: None }
    }

    /// The position this page reached: its last item's, else the `since` it was asked after.
    pub fn last_seq(&self, since: u64) -> u64 {
        self.items.last().map_or(since, T::seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        assert_eq!(decode_cursor(&encode_cursor(40)), Some(40));
        assert_eq!(decode_cursor("not a cursor"), None);
    }

    #[test]
    fn json_len_is_the_length_of_the_compact_text() {
        let value = json!({"slug": "hummus", "note": "Less \"garlic\"", "n": [1, 2.5, null], "he": "חומוס"});
        assert_eq!(json_len(&value), serde_json::to_string(&value).unwrap().len());
        assert_eq!(json_len("é"), 4);
    }

    #[test]
    fn a_page_holds_what_fits_in_the_budget() {
        assert_eq!(fitting([300, 300, 300, 300], 1000), 3);
        assert_eq!(fitting([300, 300, 400, 1], 1000), 3, "exactly the budget fits");
        assert_eq!(fitting([10, 10], 1000), 2);
        assert_eq!(fitting([], 1000), 0);
    }

    #[test]
    fn an_item_larger_than_the_budget_is_a_page_by_itself() {
        assert_eq!(fitting([5000, 1], 1000), 1);
        assert_eq!(fitting([1, 5000], 1000), 1);
    }

    #[test]
    fn following_the_cut_visits_every_item_once() {
        let sizes = [700, 200, 200, 1500, 10, 10, 990, 5, 600, 600];
        let mut start = 0;
        let mut pages = Vec::new();
        while start < sizes.len() {
            let n = fitting(sizes[start..].iter().copied(), 1000);
            assert!(n >= 1);
            pages.push(start..start + n);
            start += n;
        }
        assert_eq!(pages, [0..2, 2..3, 3..4, 4..6, 6..8, 8..9, 9..10]);
    }

    #[test]
    fn cut_says_whether_the_budget_cut() {
        let mut items: Vec<String> = vec!["a".repeat(500), "b".repeat(500), "c".repeat(500)];
        // Each is 502 bytes of JSON (the quotes count).
        assert!(cut(&mut items, 1004));
        assert_eq!(items.len(), 2);
        assert!(!cut(&mut items, 1004));
        assert_eq!(items.len(), 2);
    }

    #[test]
    fn rows_worth_reading_never_leave_out_a_row_the_page_holds() {
        // Lower bounds and true sizes of six rows; every row's true size is at least its bound.
        let bounds = [300, 10, 290, 400, 100, 50];
        let sizes = [320, 40, 300, 420, 120, 60];
        for budget in [1, 200, 330, 660, 700, 1000, 2000] {
            let read = rows_worth_reading(bounds, budget);
            let kept = fitting(sizes, budget);
            assert!(read >= kept, "budget {budget}: read {read} rows but the page holds {kept}");
        }
        assert_eq!(rows_worth_reading(bounds, 600), 3);
        assert_eq!(rows_worth_reading([5000, 1], 1000), 1);
        assert_eq!(rows_worth_reading([], 1000), 0);
    }

    #[test]
    fn a_feed_page_leaves_more_when_cut_or_full() {
        assert!(more_after(3, 5, 100), "the budget cut it");
        assert!(more_after(100, 100, 100), "as many as asked for");
        assert!(!more_after(5, 5, 100), "the end of the feed");
    }

    #[derive(Serialize)]
    struct At {
        seq: u64,
    }

    impl Positioned for At {
        fn seq(&self) -> u64 {
            self.seq
        }
    }

    #[test]
    fn a_feed_page_goes_on_after_its_last_item_and_names_its_feed_only_when_it_has_one() {
        let full = FeedPage::of(vec![At { seq: 4 }, At { seq: 7 }], 2, 2);
        assert_eq!(full.next_since, Some(7), "as many as asked for: there may be more");
        assert_eq!(
            serde_json::to_string(&full).unwrap(),
            r#"{"items":[{"seq":4},{"seq":7}],"next_since":7}"#
        );
        let end = FeedPage::of(vec![At { seq: 9 }], 1, 100);
        assert_eq!((end.next_since, end.last_seq(8)), (None, 9));
        let named = FeedPage { feed: Some("f1".into()), ..FeedPage::<At>::of(Vec::new(), 0, 100) };
        assert_eq!((named.next_since, named.last_seq(8)), (None, 8));
        assert_eq!(serde_json::to_string(&named).unwrap(), r#"{"items":[],"next_since":null,"feed":"f1"}"#);
    }
}
