"""src/presentation/papers/: each module is a paper's own figures, found through that paper's home."""

from pathlib import Path

from src.reproduction import homes as papers

OWN = Path(__file__).resolve().parents[3] / "src" / "presentation" / "papers"


def test_every_module_belongs_to_a_paper_and_draws_figures():
    modules = sorted(p.stem for p in OWN.glob("*.py") if p.stem != "__init__")
    assert modules and set(modules) <= set(papers.names())  # a module named after no paper would never run
    for name in modules:
        module = papers.load(name).module()
        assert module is not None and module.__name__.endswith(f"presentation.papers.{name}")
        assert callable(module.figures)


def test_a_paper_without_a_module_has_no_own_figures():
    without = [name for name in papers.names() if not (OWN / f"{name}.py").is_file()]
    assert without and all(papers.load(name).module() is None for name in without)
