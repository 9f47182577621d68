"""EntEval (Chen et al. 2019; spec §8) as pure functions: word tokens and sentences, WikiEnt instances
and descriptions, title matching, and one module per task writer with its sampling and negatives.
No file I/O here: readers take lines or texts, writers return lines; the stages in
`entbench.builders.enteval.stages.wikient` and `entbench.builders.enteval.stages.*` read and write.
"""
