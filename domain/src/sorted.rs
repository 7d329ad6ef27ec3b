//! Stable sorting in one instantiation for the Worker.
//!
//! The standard library's stable sort is made anew for each element type and comparator, about
//! 3 KB of wasm each time; on wasm32 these functions sort positions with one `dyn` comparator
//! instead, so the Worker holds one copy. Natively they are the standard sort, as fast as it is.
//! The hot paths (attribution, the phrase index, recipe search) keep the standard sort: sorting
//! positions costs an indirection per comparison.

use std::cmp::Ordering;

/// Sorts `items` by `compare`, keeping equal items in their order.
pub fn sort_by<T>(items: &mut Vec<T>, mut compare: impl FnMut(&T, &T) -> Ordering) {
    if cfg!(target_arch = "wasm32") {
        let order = positions(items.len(), &mut |a, b| compare(&items[a], &items[b]));
        reorder(items, &order);
    } else {
        items.sort_by(compare);
    }
}

/// Sorts `items` by the key `key` gives each, keeping equal items in their order.
pub fn sort_by_key<T, K: Ord>(items: &mut Vec<T>, mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in their own order.
pub fn sort<T: Ord>(items: &mut Vec<T>) {
    sort_by(items, T::cmp);
}

/// The positions `0..n` stably sorted by `compare`: the one instantiation of the standard sort.
fn positions(n: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// `items` put in the order `order` names (each position once).
fn reorder<T>(items: &mut Vec<T>, order: &[usize]) {
    let mut taken: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.iter().filter_map(|&at| taken[at].take()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_sort_stably_and_reorder_keeps_every_item() {
        let words = ["pear", "fig", "apple", "kiwi", "plum"];
        let order = positions(words.len(), &mut |a, b| words[a].len().cmp(&words[b].len()));
        assert_eq!(order, [1, 0, 3, 4, 2], "equal lengths keep their order");
        let mut items: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        reorder(&mut items, &order);
        assert_eq!(items, ["fig", "pear", "kiwi", "plum", "apple"]);
        let mut again: Vec<&str> = words.to_vec();
        sort_by_key(&mut again, |w| w.len());
        assert_eq!(again, ["fig", "pear", "kiwi", "plum", "apple"]);
    }
}
