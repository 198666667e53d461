//! The tantivy index: one document per tool, three text fields (name, description, parameter
//! names) analysed alike; and, built apart on first use, the single-field baseline's index.

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

/// The index BM25F ranks from: the three fields it combines.
pub(crate) fn build(docs: &[ToolDoc]) -> Result<Built, SearchError> {
    let mut schema = Schema::builder();
    let fields = Fields {
        name: schema.add_text_field("name", text_options()),
        description: schema.add_text_field("description", text_options()),
        params: schema.add_text_field("params", text_options()),
        ord: schema.add_u64_field("ord", FAST),
    };
    let (index, reader, ords) = write(schema.build(), fields.ord, docs, |document, doc| {
        document.add_text(fields.name, &doc.address);
        document.add_text(fields.description, description_text(doc));
        document.add_text(fields.params, doc.params.join(" "));
    })?;
    Ok(Built {
        index,
        reader,
        fields,
        ords,
    })
}

/// The single-field BM25 baseline's index: name, description and parameters in one field.
/// Only evaluation ranks with it ([`crate::Ranker::SingleField`]), so it is built on first use,
/// not with every catalog: indexing the text twice made every index build slower.
pub(crate) struct SingleField {
    pub reader: IndexReader,
    pub field: Field,
    pub ords: Vec<Vec<usize>>,
}

pub(crate) fn build_single_field(docs: &[ToolDoc]) -> Result<SingleField, SearchError> {
    let mut schema = Schema::builder();
    let field = schema.add_text_field("combined", text_options());
    let ord = schema.add_u64_field("ord", FAST);
    let (_, reader, ords) = write(schema.build(), ord, docs, |document, doc| {
        document.add_text(
            field,
            format!(
                "{} {} {}",
                doc.address,
                description_text(doc),
                doc.params.join(" ")
            ),
        );
    })?;
    Ok(SingleField {
        reader,
        field,
        ords,
    })
}

fn text_options() -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs)
            .set_fieldnorms(true),
    )
}

/// Indexes `docs` in RAM with `schema`, each document filled by `fill` and numbered in `ord`.
fn write(
    schema: Schema,
    ord: Field,
    docs: &[ToolDoc],
    fill: impl Fn(&mut TantivyDocument, &ToolDoc),
) -> Result<(Index, IndexReader, Vec<Vec<usize>>), SearchError> {
    let index = Index::create_in_ram(schema);
    index.tokenizers().register(ANALYZER, analyzer());
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_MEMORY)?;
    for (position, doc) in docs.iter().enumerate() {
        let mut document = TantivyDocument::default();
        fill(&mut document, doc);
        document.add_u64(ord, position as u64);
        writer.add_document(document)?;
    }
    writer.commit()?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    let ords = segment_ords(&reader.searcher(), ord)?;
    Ok((index, reader, ords))
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
