"""M/M/4 (lambda 3.6/s, mu 1/s, rho 0.9) in SimPy 2: the peer baseline of
bench/scenarios/mm4.yaml, whole process against whole process.

Same model as the scenario: Poisson arrivals for 250,000 s, four servers
with one FIFO queue (an unbounded Resource of capacity 4), exponential
service of mean 1 s; about 900,000 customers.  Prints the number of
completed customers and the mean wait in queue.  Run with Debian's
/usr/bin/python3 (python3-simpy provides SimPy 2).
"""
import random

from SimPy.Simulation import (Process, Resource, activate, hold, initialize,
                              release, request, simulate, now)

LAMBDA, MU, SERVERS, ARRIVALS_END, HORIZON = 3.6, 1.0, 4, 250000.0, 250001.0


class Stats:
    completed = 0
    wait_sum = 0.0


class Customer(Process):
    def visit(self, server):
        arrived = now()
        yield request, self, server
        wait = now() - arrived
        yield hold, self, random.expovariate(MU)
        yield release, self, server
        Stats.completed += 1
        Stats.wait_sum += wait


class Source(Process):
    def generate(self, server):
        while True:
            yield hold, self, random.expovariate(LAMBDA)
            if now() > ARRIVALS_END:
                return
            c = Customer()
            activate(c, c.visit(server))


def main():
    random.seed(1)
    initialize()
    server = Resource(capacity=SERVERS)
    src = Source()
    activate(src, src.generate(server))
    simulate(until=HORIZON)
    print(f"completed {Stats.completed} wq {Stats.wait_sum / Stats.completed:.3f} s")


if __name__ == "__main__":
    main()
