//! Pages of a long answer: a text cut into consecutive pieces, each within a
//! budget (UTF-16 units or tokens, as measured by a [`Meter`]), cut after a
//! line's `'\n'` wherever a whole line fits, and followed by a footer that
//! says how to ask for the next page.
//!
//! The pages of a text are its exact partition: concatenating every page's
//! [`Page::body`] gives the text back, nothing is dropped or repeated. A page
//! with its footer never exceeds the budget.

use crate::meter::{floor_boundary, prefix_fit, Meter};

/// One page of a text, located by [`page_of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The page's number (1-based).
    pub number: usize,
    /// Byte offset of the page's first byte in the text.
    pub start: usize,
    /// Byte offset just past the page's last byte.
    pub end: usize,
    /// Whether more pages follow.
    pub has_more: bool,
}

impl Page {
    /// The page's piece of `text`.
    pub fn body<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.start..self.end).unwrap_or("")
    }
}

/// Where page `number` of `text` is, or how many pages there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageLookup {
    /// The page exists.
    Found(Page),
    /// `number` is past the last page; the text has this many pages.
    Beyond(usize),
}

/// The footer of page `number`: how to get the next one, or that it is the last.
/// It starts with one `'\n'`: the page's text ends with the `'\n'` of its last line
/// (the footer follows a blank line) or, when a line was cut, mid-line (the footer
/// starts the next line), so stripping the footer gives the page's piece back.
pub fn footer(number: usize, has_more: bool) -> String {
    if has_more {
        format!(
            "\n[Page {number} of this answer. More follows: call again with the same arguments and page: {}]",
            number.saturating_add(1)
        )
    } else {
        format!("\n[Page {number} of this answer, the last.]")
    }
}

/// The most any footer costs (page numbers of any width), so that the pages
/// of a text are the same whichever page is asked for.
fn footer_cost(meter: &dyn Meter) -> usize {
    let widest = usize::MAX - 1;
    meter
        .measure(&footer(widest, true))
        .max(meter.measure(&footer(widest, false)))
}

/// The end (byte offset) of the page that starts at `start`, with `budget`
/// units for its body: after the last `'\n'` that fits, or within the line
/// when not even one whole line fits. At least one character is taken so
/// that paging always advances.
fn page_end(text: &str, start: usize, meter: &dyn Meter, budget: usize) -> usize {
    let rest = &text[start..];
    let fit = prefix_fit(meter, rest, budget);
    if fit == rest.len() {
        return text.len();
    }
    let mut end = match memchr::memrchr(b'\n', &rest.as_bytes()[..fit]) {
        Some(i) => i + 1,
        None => fit,
    };
    // Meters of merged units (tokens) need not shrink with the text: check the cut.
    while end > 0 && !meter.is_additive() && meter.measure(&rest[..end]) > budget {
        end = floor_boundary(rest, end - 1);
    }
    if end == 0 {
        // Not even one character fits: take one so that paging ends.
        end = rest.chars().next().map_or(rest.len(), char::len_utf8);
    }
    start + end
}

/// Locates page `number` (1-based; 0 is taken as 1) of `text` when each page,
/// footer included, gets `budget` units of `meter`. A text that fits whole is
/// one page without a footer. Work is proportional to the text up to the end
/// of the page asked for (to the end of the text for [`PageLookup::Beyond`]).
pub fn page_of(text: &str, meter: &dyn Meter, budget: usize, number: usize) -> PageLookup {
    PageIndex::default().locate(text, meter, budget, number)
}

/// Page `number` of `text` with its footer (none when the text is one page),
/// or an error line naming how many pages there are.
pub fn render_page(
    text: &str,
    meter: &dyn Meter,
    budget: usize,
    number: usize,
) -> Result<(String, Page), usize> {
    PageIndex::default().render(text, meter, budget, number)
}

/// Where the pages of one text start, kept between lookups: each page
/// boundary is found once, and a lookup past the pages found so far goes on
/// from the last of them. Reading every page of a text one after another thus
/// costs one pass over it, where [`page_of`] alone would walk from the first
/// page every time.
///
/// An index belongs to one text, meter and budget: use it with the same three
/// every time. Its pages are those of [`page_of`].
#[derive(Debug, Clone, Default)]
pub struct PageIndex {
    /// The start of every page found so far, in order (page 1 starts at 0);
    /// empty before the first lookup.
    starts: Vec<usize>,
    /// Whether the whole text fits one page, without a footer.
    whole: bool,
    /// How many pages there are, once the last one has been found.
    total: Option<usize>,
}

impl PageIndex {
    /// Locates page `number` (1-based; 0 is taken as 1), as [`page_of`] does.
    /// Work is proportional to the part of the text between the furthest page
    /// found before and the end of the page asked for.
    pub fn locate(&mut self, text: &str, meter: &dyn Meter, budget: usize, number: usize) -> PageLookup {
        let number = number.max(1);
        if self.starts.is_empty() {
            self.starts.push(0);
            self.whole = prefix_fit(meter, text, budget) == text.len();
            if self.whole {
                self.total = Some(1);
            }
        }
        if self.whole {
            return match number {
                1 => PageLookup::Found(Page {
                    number: 1,
                    start: 0,
                    end: text.len(),
                    has_more: false,
                }),
                _ => PageLookup::Beyond(1),
            };
        }
        let body_budget = budget.saturating_sub(footer_cost(meter));
        loop {
            let known = self.starts.len();
            if number <= known {
                let start = self.starts[number - 1];
                let end = page_end(text, start, meter, body_budget);
                let has_more = end < text.len();
                if !has_more {
                    self.total = Some(number);
                } else if number == known {
                    self.starts.push(end);
                }
                return PageLookup::Found(Page {
                    number,
                    start,
                    end,
                    has_more,
                });
            }
            if let Some(total) = self.total {
                return PageLookup::Beyond(total);
            }
            let end = page_end(text, self.starts[known - 1], meter, body_budget);
            if end < text.len() {
                self.starts.push(end);
            } else {
                self.total = Some(known);
            }
        }
    }

    /// Page `number` of `text` with its footer (none when the text is one
    /// page), as [`render_page`] renders it; `Err` with the number of pages
    /// when `number` is past the last.
    pub fn render(
        &mut self,
        text: &str,
        meter: &dyn Meter,
        budget: usize,
        number: usize,
    ) -> Result<(String, Page), usize> {
        match self.locate(text, meter, budget, number) {
            PageLookup::Beyond(pages) => Err(pages),
            PageLookup::Found(page) => {
                let body = page.body(text);
                if page.number == 1 && !page.has_more {
                    return Ok((body.to_owned(), page));
                }
                let footer = footer(page.number, page.has_more);
                Ok((format!("{body}{footer}"), page))
            }
        }
    }

    /// Whether page `number` can be located without walking the text: its
    /// start is known, or how many pages there are.
    #[must_use]
    pub fn knows(&self, number: usize) -> bool {
        !self.starts.is_empty() && (self.whole || number.max(1) <= self.starts.len() || self.total.is_some())
    }

    /// Bytes this index holds (its page starts).
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Utf16Meter;
    use proptest::prelude::*;

    fn all_pages(text: &str, budget: usize) -> Vec<(String, Page)> {
        let mut pages = Vec::new();
        for n in 1.. {
            match render_page(text, &Utf16Meter, budget, n) {
                Ok(p) => {
                    let more = p.1.has_more;
                    pages.push(p);
                    if !more {
                        break;
                    }
                }
                Err(total) => panic!("page {n} beyond {total}"),
            }
        }
        pages
    }

    #[test]
    fn a_text_that_fits_is_one_page_without_footer() {
        let (text, page) = render_page("a\nb", &Utf16Meter, 10, 1).unwrap();
        assert_eq!(text, "a\nb");
        assert!(!page.has_more);
        assert_eq!(render_page("a\nb", &Utf16Meter, 10, 2), Err(1));
    }

    #[test]
    fn pages_cut_after_newlines_and_say_how_to_continue() {
        let text: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        let pages = all_pages(&text, 200);
        assert!(pages.len() > 5);
        let first = &pages[0].0;
        assert!(first.ends_with("page: 2]"), "{first}");
        assert!(pages[0].1.body(&text).ends_with('\n'));
        assert!(pages.last().unwrap().0.ends_with("the last.]"));
        let joined: String = pages.iter().map(|(_, p)| p.body(&text)).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn a_line_longer_than_a_page_is_cut_within() {
        let text = "x".repeat(1000);
        let pages = all_pages(&text, 150);
        assert!(pages.iter().all(|(t, _)| Utf16Meter.measure(t) <= 150));
        let joined: String = pages.iter().map(|(_, p)| p.body(&text)).collect();
        assert_eq!(joined, text);
    }

    /// One index asked for pages in any order (repeats, jumps past the end)
    /// answers what a fresh lookup answers.
    #[test]
    fn an_index_answers_as_fresh_lookups_in_any_order() {
        let text: String = (1..=300).map(|i| format!("line {i} {}\n", "é".repeat(i % 7))).collect();
        let mut index = PageIndex::default();
        let total = match page_of(&text, &Utf16Meter, 150, usize::MAX) {
            PageLookup::Beyond(n) => n,
            PageLookup::Found(_) => unreachable!("the text has fewer pages"),
        };
        assert!(total > 20);
        for n in [5, 1, 2, 2, total + 3, total, 7, 6, total - 1, 1, total + 1, 0, 3] {
            assert_eq!(index.locate(&text, &Utf16Meter, 150, n), page_of(&text, &Utf16Meter, 150, n), "page {n}");
            assert_eq!(index.render(&text, &Utf16Meter, 150, n), render_page(&text, &Utf16Meter, 150, n), "page {n}");
        }
        let mut whole = PageIndex::default();
        assert_eq!(whole.render("a\nb", &Utf16Meter, 10, 1), Ok(("a\nb".to_owned(), Page { number: 1, start: 0, end: 3, has_more: false })));
        assert_eq!(whole.render("a\nb", &Utf16Meter, 10, 2), Err(1));
        assert!(index.heap_bytes() >= total * std::mem::size_of::<usize>());
    }

    proptest! {
        #[test]
        fn an_index_matches_page_of_for_every_page(
            lines in proptest::collection::vec("[a-z😀é ]{0,40}", 0..60),
            budget in 120usize..400,
            order in proptest::collection::vec(0usize..40, 1..30),
        ) {
            let text = lines.join("\n");
            let mut index = PageIndex::default();
            for n in order {
                prop_assert_eq!(index.locate(&text, &Utf16Meter, budget, n), page_of(&text, &Utf16Meter, budget, n));
            }
        }

        #[test]
        fn pages_partition_the_text_within_budget(
            lines in proptest::collection::vec("[a-z😀é ]{0,40}", 0..60),
            budget in 120usize..400,
        ) {
            let text = lines.join("\n");
            let pages = all_pages(&text, budget);
            let joined: String = pages.iter().map(|(_, p)| p.body(&text)).collect();
            prop_assert_eq!(&joined, &text);
            for (rendered, _) in &pages {
                prop_assert!(Utf16Meter.measure(rendered) <= budget);
            }
        }
    }
}
