"""The network sections: ``[bottleneck]`` (with its rate schedule) and ``[[senders]]``
(each sender's path RTT and access link), and the bottleneck buffer as resolved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag

from ..units import Size
from .fields import BdpRtt, Duration, Loss, Name, OptDuration, OptName, OptRate, OptSize, Rate, SizeField, _Model
from .host import HostSpec
from .qdisc import QdiscSpec, TbfSpec

#: Access links default to this multiple of the (highest) bottleneck rate.
ACCESS_RATE_FACTOR = 10
#: Floor of the default access queue (Linux's default ``txqueuelen``).
ACCESS_QUEUE_FLOOR_PACKETS = 1000
#: Queue of a link's reverse (ACK) direction (engine ``DEFAULT_REVERSE_QUEUE_PKTS``).
REVERSE_QUEUE_PACKETS = 1000


class RateChange(_Model):
    """One entry of ``bottleneck.rate_schedule``: from time ``at`` the rate is ``rate``."""

    at: Duration = Field(description="time of the change, e.g. '20s'")
    rate: Rate = Field(description="new rate, e.g. '50Mbit'")


class GilbertElliottSpec(_Model):
    """Bursty loss: the two-state Gilbert–Elliott chain (netem's ``gemodel p r 1-h 1-k``)."""

    model: Literal["gilbert_elliott"] = Field(description="'gilbert_elliott'")
    p: float = Field(ge=0, le=1, description="probability of moving Good -> Bad at a packet")
    r: float = Field(ge=0, le=1, description="probability of moving Bad -> Good at a packet")
    loss_good: float = Field(0.0, ge=0, le=1, description="loss probability in the Good state")
    loss_bad: float = Field(1.0, ge=0, le=1, description="loss probability in the Bad state")


def _loss_form(value: Any) -> str:
    return "gilbert_elliott" if isinstance(value, (dict, GilbertElliottSpec)) else "probability"


LossSpec = Annotated[
    Union[Annotated[GilbertElliottSpec, Tag("gilbert_elliott")], Annotated[Loss, Tag("probability")]],
    Discriminator(_loss_form),
]


def resolve_loss_value(loss: Any) -> float | dict[str, float]:
    """The engine's ``LossConfig``: a Bernoulli probability or the Gilbert–Elliott table."""
    return resolve_loss(loss)["gilbert_elliott"] or loss


def resolve_loss(loss: Any) -> dict[str, Any]:
    """The engine link's ``loss`` (Bernoulli) and ``gilbert_elliott`` fields."""
    if isinstance(loss, GilbertElliottSpec):
        ge = {"p": loss.p, "r": loss.r, "loss_good": loss.loss_good, "loss_bad": loss.loss_bad}
        return {"loss": 0.0, "gilbert_elliott": ge}
    return {"loss": loss, "gilbert_elliott": None}


class ReverseLinkSpec(_Model):
    """``reverse = {...}`` of a link: its reverse (ACK) direction. By default it has the
    forward's rate and a 1000-packet pfifo; its propagation delay is the forward's."""

    rate: OptRate = Field(None, description="rate of the reverse direction; default: the forward rate")
    buffer: SizeField = Field(
        Size.packets(REVERSE_QUEUE_PACKETS),
        description="queue limit; default 1000pkt (a BDP multiple is at the reverse rate and the link's bdp_rtt)",
    )
    qdisc: QdiscSpec | None = Field(
        None, description="queue discipline, as the forward's; default pfifo/bfifo by the buffer's unit"
    )
    rate_schedule: list[RateChange] = Field(
        default_factory=list, description="rate changes of the reverse direction [{at='20s', rate='5Mbit'}]"
    )


#: A link's reverse direction when its spec has no ``reverse`` table.
DEFAULT_REVERSE_LINK = ReverseLinkSpec.model_validate({})


class BottleneckSpec(_Model):
    """``[bottleneck]``: the shared link from router A to router B."""

    rate: Rate = Field(description="bottleneck rate, e.g. '100Mbit'")
    delay: Duration = Field(0, description="one-way propagation delay of the bottleneck link, e.g. '5ms'")
    jitter: Duration = Field(
        0,
        description="per-packet variation of the delay, in each direction: each packet's delay is uniform in "
        "[delay - jitter, delay + jitter) and packets may overtake each other (netem 'delay D J'); at most delay; "
        "default 0s (constant)",
    )
    buffer: SizeField = Field(
        Size.bdp(1), description="queue limit: bytes ('1250KB'), packets ('900pkt') or BDP multiples ('2BDP')"
    )
    bdp_rtt: BdpRtt = Field("min", description="RTT of the BDP: 'min', 'max', a sender name or a duration")
    qdisc: QdiscSpec | None = Field(
        None,
        description="queue discipline: 'pfifo', 'bfifo', 'red', 'codel', 'fq_codel', 'pie', 'fq_pie', 'prio', 'htb', "
        "'ncf', "
        "or a table {kind='red', ...} overriding tc defaults; default pfifo/bfifo by the buffer's unit",
    )
    shaper: TbfSpec | None = Field(
        None, description="token-bucket shaper {rate, burst, peakrate, mtu} in front of the qdisc (tc tbf)"
    )
    loss: LossSpec = Field(
        0.0, description="random loss on the bottleneck: 0.001, '0.1%' or {model='gilbert_elliott', p, r, ...}"
    )
    reverse_loss: LossSpec = Field(0.0, description="random loss on the reverse (ACK) direction of the bottleneck")
    reverse: ReverseLinkSpec | None = Field(
        None, description="the reverse (ACK) direction {rate, buffer, qdisc, rate_schedule}; default: forward rate, 1000pkt pfifo"
    )
    rate_schedule: list[RateChange] = Field(
        default_factory=list, description="rate changes [{at='20s', rate='50Mbit'}]"
    )
    limit_includes_head: bool = Field(
        True,
        description="tc accounting: the packet in transmission counts toward the limit (tbf + pfifo: "
        "N packets in the system); false = N waiting + 1 in service",
    )


class SenderSpec(_Model):
    """``[[senders]]``: a sending host, its path RTT, its access link and (beyond the
    dumbbell) its place in the topology."""

    name: Name = Field(description="sender name, e.g. 'left'")
    rtt: OptDuration = Field(
        description="base (propagation) round-trip time of this sender's path, e.g. '100ms'; in a graph, "
        "default: the route's own propagation RTT",
        default=None,
    )
    access_rate: OptRate = Field(None, description="access link rate; default 10 x the bottleneck rate")
    access_queue: OptSize = Field(None, description="access link queue limit (packets or bytes)")
    delay_path: Literal["split", "data", "ack"] = Field(
        "split", description="where the path delay sits: 'split' (half each way), 'data' or 'ack' path"
    )
    jitter: Duration = Field(
        0,
        description="per-packet variation of its access path's delay, in each direction that carries some of it "
        "(delay_path): uniform in [d - jitter, d + jitter) and packets may overtake each other (netem 'delay D J'); "
        "at most that one-way delay d; default 0s (constant)",
    )
    host: HostSpec | None = Field(None, description="overrides of [host] for this sender and its receivers")
    first_hop: int | None = Field(None, ge=0, description="parking lot: first hop its data crosses (default 0)")
    last_hop: int | None = Field(None, ge=0, description="parking lot: last hop its data crosses (default the last)")
    src: OptName = Field(None, description="graph: router of the sending host")
    dst: OptName = Field(None, description="graph: router of its receivers")
    route: list[Name] | None = Field(
        None, description="graph: the routers its data crosses, src to dst (default: the shortest path by delay)"
    )
    access_loss: LossSpec = Field(
        0.0,
        description="random loss on its access link, data direction: 0.001, '0.1%' or {model='gilbert_elliott', ...}",
    )
    access_reverse_loss: LossSpec = Field(0.0, description="random loss on its access link, ACK direction")


@dataclass(frozen=True)
class ResolvedBuffer:
    """The bottleneck buffer as resolved: every form of the limit, for the manifest."""

    qdisc: str
    bdp_rtt_ns: int
    bdp_bytes: int
    packet_bytes: int
    bytes: int
    packets: int
