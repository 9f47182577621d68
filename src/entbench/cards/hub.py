"""What a dataset card tells the Hugging Face Hub about a target beyond its tables: its task
categories and ids (the Hub's task taxonomy), the datasets it derives from, and the paper to cite,
with entbench's own citation.

A benchmark target's card names its entry (`register_card(…, hub=HANSEL)` in `cards.targets`); a
target without one (the dump scans, an intermediate target) gets no task metadata and only
entbench's citation.
"""

from __future__ import annotations

from dataclasses import dataclass

from entbench import __version__


@dataclass(frozen=True)
class HubMetadata:
    """A target's Hub metadata and its paper."""

    task_categories: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()
    paper: str = ""  # the paper's name, as the card says it
    bibtex: str = ""  # its BibTeX entry


HANSEL = HubMetadata(
    task_categories=("text-retrieval",),
    task_ids=("entity-linking-retrieval",),
    paper="Hansel (Xu et al., WSDM 2023)",
    bibtex="""@inproceedings{xu2023hansel,
  title = {Hansel: A Chinese Few-Shot and Zero-Shot Entity Linking Benchmark},
  author = {Xu, Zhenran and Shan, Zifei and Li, Yuxin and Hu, Baotian and Qin, Bing},
  booktitle = {Proceedings of the Sixteenth ACM International Conference on Web Search and Data
               Mining (WSDM '23)},
  publisher = {Association for Computing Machinery},
  year = {2023}
}""",
)
WIKIREADING = HubMetadata(
    task_categories=("question-answering",),
    task_ids=("extractive-qa", "abstractive-qa"),
    paper="WikiReading (Hewlett et al., ACL 2016)",
    bibtex="""@inproceedings{hewlett2016wikireading,
  title = {{WikiReading}: A Novel Large-scale Language Understanding Task over {Wikipedia}},
  author = {Hewlett, Daniel and Lacoste, Alexandre and Jones, Llion and Polosukhin, Illia and
            Fandrianto, Andrew and Han, Jay and Kelcey, Matthew and Berthelot, David},
  booktitle = {Proceedings of the 54th Annual Meeting of the Association for Computational Linguistics},
  pages = {1535--1545},
  address = {Berlin, Germany},
  year = {2016}
}""",
)
ENTEVAL = HubMetadata(
    task_categories=("text-classification",),
    task_ids=("entity-linking-classification",),
    paper="EntEval (Chen et al., EMNLP-IJCNLP 2019)",
    bibtex="""@inproceedings{chen2019enteval,
  title = {{EntEval}: A Holistic Evaluation Benchmark for Entity Representations},
  author = {Chen, Mingda and Chu, Zewei and Chen, Yang and Stratos, Karl and Gimpel, Kevin},
  booktitle = {Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing
               and the 9th International Joint Conference on Natural Language Processing
               (EMNLP-IJCNLP)},
  year = {2019}
}""",
)

ENTBENCH_BIBTEX = f"""@software{{entbench,
  title = {{entbench: deterministic builders for entity-centric NLP benchmarks from Wikidata and
           Wikipedia dumps}},
  author = {{{{The entbench authors}}}},
  version = {{{__version__}}},
  license = {{Apache-2.0}}
}}"""


def citation_blocks(meta: HubMetadata) -> tuple[str, ...]:
    """A card's citation: the paper its target rebuilds (`meta`: the target's Hub metadata), then
    entbench, as BibTeX."""
    blocks = []
    if meta.bibtex:
        blocks += [f"The benchmark this target rebuilds, {meta.paper}:", f"```bibtex\n{meta.bibtex}\n```"]
    blocks += ["entbench, which built it:", f"```bibtex\n{ENTBENCH_BIBTEX}\n```"]
    return tuple(blocks)
