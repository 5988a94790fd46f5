"""M/M/1 (lambda 0.9, mu 1) in SimPy 2, the peer baseline of bench_mm1.

Same model as sim_mm1_run: Poisson arrivals, one FIFO server, exponential
service; stops when CUSTOMERS customers have started service.  Prints the
wall time of the simulation (interpreter start excluded) and the mean wait.
Run with Debian's /usr/bin/python3 (python3-simpy provides SimPy 2).
"""
import random
import sys
import time

from SimPy.Simulation import (Process, Resource, activate, hold, initialize,
                              release, request, simulate, stopSimulation, now)

LAMBDA, MU = 0.9, 1.0


class Stats:
    started = 0
    wait_sum = 0.0
    target = 0


class Customer(Process):
    def visit(self, server):
        arrived = now()
        yield request, self, server
        Stats.started += 1
        Stats.wait_sum += now() - arrived
        if Stats.started == Stats.target:
            stopSimulation()
        yield hold, self, random.expovariate(MU)
        yield release, self, server


class Source(Process):
    def generate(self, server):
        while True:
            yield hold, self, random.expovariate(LAMBDA)
            c = Customer()
            activate(c, c.visit(server))


def main():
    Stats.target = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    random.seed(1)
    t0 = time.perf_counter()
    initialize()
    server = Resource(capacity=1)
    src = Source()
    activate(src, src.generate(server))
    simulate(until=1e18)
    wall = time.perf_counter() - t0
    print(f"simpy wall {wall:.3f} wq {Stats.wait_sum / Stats.started:.3f}")


if __name__ == "__main__":
    main()
