"""The player's window: a world model's frames next to the real game's and their difference,
stepped with the keyboard (`python -m rlkit.rl.player` is the command; its docstring gives
the keys and modes)."""

import numpy as np
from absl import logging

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import action_space_of, make_batch_env
from rlkit.display import open_window
from rlkit.errors import UserError
from rlkit.video import text_strip, with_header

MODES = ("sim_and_real", "simulated", "real")
DIFFERENCE_THRESHOLD = 10
COLUMN_GAP = 2  # black pixels (before zoom) between the columns
KEYS_HELP = "W/A/S/D move, space fire, N no-op, R reset, X resync, C real-time, P policy, Q quit"
DIFFERENCE_TITLE = "difference |model - real|"


def action_for(pressed, action_meanings):
    """The game's action for the pressed directions and FIRE ({"UP", "FIRE"} -> "UPFIRE").

    ALE names combinations vertical + horizontal + FIRE; a combination the game lacks falls
    back to its largest part the game has (FIRE dropped first), then to NOOP.
    """
    def one_of(first, second):  # opposite directions held together cancel out
        return [d for d in (first, second) if d in pressed] if (first in pressed) != (second in pressed) else []
    vertical, horizontal = one_of("UP", "DOWN"), one_of("RIGHT", "LEFT")
    fire = ["FIRE"] if "FIRE" in pressed else []
    candidates = [vertical + horizontal + fire, vertical + horizontal, vertical + fire, horizontal + fire,
                  vertical, horizontal, fire]
    for parts in candidates:
        if parts and "".join(parts) in action_meanings:
            return action_meanings.index("".join(parts))
    return action_meanings.index("NOOP")


def difference_image(model_frame, real_frame):
    """|model - real| per pixel, less DIFFERENCE_THRESHOLD and floored at 0."""
    difference = np.abs(model_frame.astype(np.int16) - real_frame.astype(np.int16)) - DIFFERENCE_THRESHOLD
    return np.clip(difference, 0, 255).astype(np.uint8)


class Column:
    """One game shown in the window: its last k frames (what the world model starts from and the
    policy sees the newest of), rewards and frame count."""

    def __init__(self, title):
        self.title = title
        self.history = None  # [k, H, W, C]
        self.cumulative = self.last = 0.0
        self.frames = 0

    def start(self, history):
        self.history = np.array(history)
        self.cumulative = self.last = 0.0
        self.frames = 0

    def add(self, frame, reward):
        self.history = np.concatenate([self.history[1:], frame[None]])
        self.last = float(reward)
        self.cumulative += self.last
        self.frames += 1

    @property
    def frame(self):
        return self.history[-1]

    def header(self):
        return f"{self.title} cum {self.cumulative:g} r {self.last:g} f {self.frames}"


class Player:
    """The game state behind the window: a real env and/or a world model, stepped together."""

    def __init__(self, mode, hparams, model=None, store=None, policy=None, seed=0, zoom=3):
        """store: a FrameStore of real data that simulated mode starts the model from."""
        self.mode, self.hparams, self.model, self.policy, self.zoom = mode, hparams, model, policy, zoom
        # Frames kept per game: the policy's stack, and the model's context (Dreamer's policy stacks none).
        self.model_context = model.hparams.num_context_frames if model is not None else 1
        self.context = max(hparams.frame_stack_size, self.model_context)
        self.real_env = FrameStack(make_batch_env(hparams, 1), hparams.frame_stack_size) if mode != "simulated" else None
        self.action_meanings = action_space_of(hparams)[1]
        self.store = store
        if mode == "simulated" and not (store and store.chosen_episodes(None, self.context, from_start=True)):
            raise UserError(f"no stored episode start with {self.context} frames to begin the world model from")
        self.real = Column("real") if mode != "simulated" else None
        self.simulated = Column("model") if mode != "real" else None
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.waiting = True          # step on key presses (else in real time)
        self.policy_control = False
        self.held = set()            # "UP", "DOWN", "LEFT", "RIGHT", "FIRE"
        self.recorded = []           # canvases, when recording
        self.reset()

    def reset(self):
        """Restarts the real game (its first k frames, reached with no-ops) and the model from them."""
        if self.real_env is not None:
            stack = self.real_env.reset(seed=self.seed)
            self.seed += 1
            frames = [stack[0, -1]]
            for _ in range(self.context - 1):  # k real frames for the model to start from
                stack, _ = self.real_env.step(np.zeros(1, np.int64))
                frames.append(stack[0, -1])
            frames = np.stack(frames)
            self.real.start(frames)
        else:
            frames = self.store.random_window(self.rng, self.context, from_start=True)["frames"]
        if self.simulated is not None:
            self.simulated.start(frames)
            self.state = None  # imagine starts the model's recurrent state afresh
        if hasattr(self.policy, "reset"):  # a recurrent policy (Dreamer's) starts afresh too
            self.policy.reset()

    def resync(self):
        """Restarts the world model from the last k real frames (X)."""
        if self.real is not None and self.simulated is not None:
            self.simulated.start(self.real.history)
            self.state = None

    def policy_action(self):
        observer = self.real if self.real is not None else self.simulated
        return int(self.policy(observer.history[None, -self.hparams.frame_stack_size:], 0.0)[0])

    def step(self, action=None):
        """One agent step of every game shown: the keys' action, or the policy's in policy control."""
        if action is None:
            action = self.policy_action() if self.policy_control else action_for(self.held, self.action_meanings)
        actions = np.array([action], np.int64)
        if self.simulated is not None:
            from rlkit.models.world_model import imagine  # TensorFlow's; loaded with the world model
            frames, rewards, _, _, self.state = imagine(self.model, self.simulated.history[None, -self.model_context:],
                                                        actions[:, None], self.state)
            self.simulated.add(frames[0, 0], rewards[0, 0])
        if self.real is not None:
            stack, step = self.real_env.step(actions)
            if step.done[0]:
                self.reset()
            else:
                self.real.add(stack[0, -1], step.raw_reward[0])

    def canvas(self):
        """The window's pixels [H, W, 3]: the columns under their headers, then the status lines."""
        columns = [(c.frame, c.header()) for c in (self.simulated, self.real) if c is not None]
        if len(columns) == 2:
            columns.append((difference_image(self.simulated.frame, self.real.frame), DIFFERENCE_TITLE))
        control = "policy plays" if self.policy_control else "you play"
        timing = "waiting for a key" if self.waiting else "real time"
        return compose(columns, [f"{self.mode} | {timing} | {control}", KEYS_HELP], self.zoom)


def compose(columns, status, zoom):
    """A window's pixels [H, W, 3]: (frame, header) columns side by side, then the status lines."""
    images = [with_header(frame, header, zoom) for frame, header in columns]
    gap = np.zeros((images[0].shape[0], COLUMN_GAP * zoom, 3), np.uint8)
    top = np.concatenate([part for image in images for part in (gap, image)][1:], axis=1)
    return np.concatenate([top, text_strip(status, top.shape[1], zoom, scale=0.25)], axis=0)


def loading_canvas(mode, frame_shape, zoom, what):
    """The window while its models load: the columns it will show, blank, the same size, and a
    status line saying what is loading."""
    blank = np.zeros(frame_shape, np.uint8)
    titles = {"sim_and_real": ["model", "real", DIFFERENCE_TITLE], "simulated": ["model"], "real": ["real"]}[mode]
    return compose([(blank, title) for title in titles], [f"loading {what} ...", KEYS_HELP], zoom)


def show(screen, canvas):
    import pygame

    pygame.surfarray.blit_array(screen, canvas.transpose(1, 0, 2))
    pygame.display.flip()
    pygame.event.pump()  # the window manager sees a live window while the models load


def open_player_window(canvas, game):
    """The player's window, showing `canvas` (its size the window's)."""
    screen = open_window(canvas.shape[1], canvas.shape[0], f"rlkit player: {game}")
    show(screen, canvas)
    return screen


def play(player, fps, max_frames=None, screen=None):
    """The pygame event loop: keys drive the player; returns when Q/Esc or the window closes.
    `screen`: the window already open (showing what loads), else one is opened."""
    import pygame

    directions = {pygame.K_w: "UP", pygame.K_s: "DOWN", pygame.K_a: "LEFT", pygame.K_d: "RIGHT",
                  pygame.K_SPACE: "FIRE"}
    canvas = player.canvas()
    if screen is None or screen.get_size() != (canvas.shape[1], canvas.shape[0]):
        screen = open_player_window(canvas, player.hparams.game)
    clock = pygame.time.Clock()
    frames = 0
    running = True
    while running and (max_frames is None or frames < max_frames):
        stepped = False
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                running = False
            elif event.type == pygame.KEYDOWN:
                if event.key in (pygame.K_q, pygame.K_ESCAPE):
                    running = False
                elif event.key == pygame.K_r:
                    player.reset()
                elif event.key == pygame.K_x:
                    player.resync()
                elif event.key == pygame.K_c:
                    player.waiting = not player.waiting
                elif event.key == pygame.K_p and player.policy is not None:
                    player.policy_control = not player.policy_control
                elif event.key == pygame.K_n and player.waiting:
                    player.step(action=player.action_meanings.index("NOOP"))
                    stepped = True
                elif event.key in directions:
                    player.held.add(directions[event.key])
                    if player.waiting:
                        player.step()
                        stepped = True
            elif event.type == pygame.KEYUP and event.key in directions:
                player.held.discard(directions[event.key])
        if running and not stepped and (not player.waiting or player.policy_control):
            player.step()
            stepped = True
        canvas = player.canvas()
        if stepped:
            player.recorded.append(canvas)
        pygame.surfarray.blit_array(screen, canvas.transpose(1, 0, 2))
        pygame.display.flip()
        if not frames:
            logging.info("Playing: %s", KEYS_HELP)
        frames += 1
        clock.tick(fps)
    return screen


def dry_run(player, steps=8):
    """A few scripted steps without a display: no-ops, the keys' actions, a resync."""
    for pressed in [set(), {"UP"}, {"RIGHT"}, {"FIRE"}, {"LEFT", "FIRE"}]:
        player.held = pressed
        player.step()
        player.recorded.append(player.canvas())
    player.resync()
    for _ in range(steps - 5):
        player.step(action=0)
        player.recorded.append(player.canvas())
