"""IMPALA (Espeholt et al., 2018): V-trace off-policy correction and the IMPALA agent."""
