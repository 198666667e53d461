//! The tantivy index: one document per tool, three text fields (name, description, parameter
//! names) analysed alike, plus one combined field used only by the single-field baseline.

use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument};

use crate::analyzer::{ANALYZER, analyzer};
use crate::{SearchError, ToolDoc};

/// Writer memory: tantivy's floor is 15 MB per thread; one thread keeps a single segment, so
/// document ids follow insertion order and the whole catalog is one posting list per term.
const WRITER_MEMORY: usize = 50_000_000;

/// The fields BM25F combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchField {
    Name,
    Description,
    Params,
}

impl SearchField {
    pub const ALL: [SearchField; 3] = [Self::Name, Self::Description, Self::Params];
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub name: Field,
    pub description: Field,
    pub params: Field,
    /// Everything in one field: the single-field BM25 baseline.
    pub combined: Field,
    /// Position of the tool in [`crate::SearchIndex::docs`].
    pub ord: Field,
}

impl Fields {
    pub(crate) fn get(&self, field: SearchField) -> Field {
        match field {
            SearchField::Name => self.name,
            SearchField::Description => self.description,
            SearchField::Params => self.params,
        }
    }
}

pub(crate) struct Built {
    pub index: Index,
    pub reader: IndexReader,
    pub fields: Fields,
    /// Per segment, per document id: position in the tool list.
    pub ords: Vec<Vec<usize>>,
}

pub(crate) fn build(docs: &[ToolDoc]) -> Result<Built, SearchError> {
    let mut schema = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs)
            .set_fieldnorms(true),
    );
    let fields = Fields {
        name: schema.add_text_field("name", text.clone()),
        description: schema.add_text_field("description", text.clone()),
        params: schema.add_text_field("params", text.clone()),
        combined: schema.add_text_field("combined", text),
        ord: schema.add_u64_field("ord", FAST),
    };
    let index = Index::create_in_ram(schema.build());
    index.tokenizers().register(ANALYZER, analyzer());
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_MEMORY)?;
    for (ord, doc) in docs.iter().enumerate() {
        let mut document = TantivyDocument::default();
        let description = description_text(doc);
        let params = doc.params.join(" ");
        document.add_text(fields.name, &doc.address);
        document.add_text(fields.description, &description);
        document.add_text(fields.params, &params);
        document.add_text(
            fields.combined,
            format!("{} {description} {params}", doc.address),
        );
        document.add_u64(fields.ord, ord as u64);
        writer.add_document(document)?;
    }
    writer.commit()?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    let ords = segment_ords(&reader.searcher(), fields.ord)?;
    Ok(Built {
        index,
        reader,
        fields,
        ords,
    })
}

/// A tool's title is prose, often a sentence: it reads with the description rather than
/// lengthening the name field. (The name field holds the address, `github.create_issue`: the
/// analyzer splits it into words and keeps it whole, and the namespace is one of those words, so
/// "github issue" prefers GitHub's tools.)
fn description_text(doc: &ToolDoc) -> String {
    match &doc.title {
        Some(title) if !title.is_empty() => format!("{title}. {}", doc.description),
        _ => doc.description.clone(),
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "the ords were written from `usize` positions in `docs`"
)]
fn segment_ords(searcher: &Searcher, ord: Field) -> Result<Vec<Vec<usize>>, SearchError> {
    let name = searcher.schema().get_field_name(ord).to_owned();
    searcher
        .segment_readers()
        .iter()
        .map(|segment| {
            let column = segment.fast_fields().u64(&name)?;
            Ok((0..segment.max_doc())
                .map(|doc| column.first(doc).unwrap_or_default() as usize)
                .collect())
        })
        .collect()
}

/// The analyzer the index was built with, for queries.
pub(crate) fn query_analyzer(index: &Index) -> TextAnalyzer {
    index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer)
}
