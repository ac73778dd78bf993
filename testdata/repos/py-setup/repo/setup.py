#!/usr/bin/env python
"""Packaging for slugline in setup.py alone, as older projects keep it."""
from setuptools import setup

install_requires = ["textcase"]

setup(
    name="slugline",
    version="1.0",
    packages=["slugline"],
    install_requires=install_requires,
)
