"""`lab --mode=enjoy`: a trained policy played on the real env, in a pygame window or recorded
as MP4s, with each episode's return."""

import os

import numpy as np

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import is_image_game, make_batch_env
from rlkit.errors import UserError
from rlkit.rl.loops.rollout import newest_pictures
from rlkit.video import display_frame, text_strip, upscale, write_mp4


def choose_policy(run_dir, which):
    """The SavedModel dir enjoy plays: policy/best (which="best", where the run kept one) or the
    newest export (which="last": policy/, or a loop run's newest policy/epoch_K)."""
    from rlkit.rl.learners.policy_export import find_policies

    policy_dir = os.path.join(run_dir, "policy")
    best = os.path.join(policy_dir, "best")
    if which == "best" and os.path.exists(os.path.join(best, "saved_model.pb")):
        return best
    if not os.path.isdir(policy_dir):
        raise UserError(f"no policy/ in {run_dir!r}: train the run first (--mode=train)")
    return find_policies(policy_dir, all_epochs=False)[-1][1]


def picture(env, observation, zoom):
    """What a person sees of env 0: the env's own drawing, or its newest frame enlarged."""
    return upscale(display_frame(newest_pictures(env, observation, 1)[0]), zoom)


def enjoy(hparams, act, num_episodes, temperature, seed, show, max_steps, zoom=2):
    """Plays `num_episodes` episodes on one real env with `act(observations, temperature)`;
    `show(frame) -> keep going?` sees every frame, headed with the episode, step and return.
    Returns [(return, length)] of the episodes played (a stopped one included)."""
    episodes = []
    with make_batch_env(hparams, 1, render=not is_image_game(hparams.game)) as batch_env:
        env = FrameStack(batch_env, hparams.frame_stack_size)
        for episode in range(num_episodes):
            observation = env.reset(seed=seed + episode)
            if hasattr(act, "reset"):  # a recurrent policy (Dreamer's) starts the episode afresh
                act.reset()
            total, length, keep_going = 0.0, 0, True
            while length < max_steps:
                image = picture(env, observation, zoom)
                header = text_strip([f"episode {episode + 1}/{num_episodes} | step {length} | return {total:g}"],
                                    image.shape[1], max(1, zoom // 2))
                if not show(np.concatenate([header, image], axis=0)):
                    keep_going = False
                    break
                observation, step = env.step(act(observation, temperature))
                total += float(step.raw_reward[0])
                length += 1
                if step.done[0]:
                    break
            episodes.append((total, length))
            print(f"episode {episode + 1}/{num_episodes}: return {total:g} over {length} steps"
                  + ("" if keep_going else " (stopped)"), flush=True)
            if not keep_going:
                break
    return episodes


class Window:
    """A pygame window showing frames at `fps`; calling it with a frame returns False once the
    user closed the window or pressed Q or Esc."""

    def __init__(self, caption, fps):
        self.caption, self.fps = caption, fps
        self.screen = self.clock = None

    def __call__(self, frame):
        import pygame

        from rlkit.display import open_window

        if self.screen is None or self.screen.get_size() != (frame.shape[1], frame.shape[0]):
            self.screen = open_window(frame.shape[1], frame.shape[0], self.caption)
            self.clock = pygame.time.Clock()
        for event in pygame.event.get():
            if event.type == pygame.QUIT or (event.type == pygame.KEYDOWN and event.key in (pygame.K_q, pygame.K_ESCAPE)):
                return False
        pygame.surfarray.blit_array(self.screen, frame.transpose(1, 0, 2))
        pygame.display.flip()
        self.clock.tick(self.fps)
        return True


class Recorder:
    """Collects frames into one MP4 per episode in `video_dir`."""

    def __init__(self, video_dir, name, fps):
        self.video_dir, self.name, self.fps = video_dir, name, fps
        self.frames, self.paths = [], []

    def __call__(self, frame):
        self.frames.append(frame)
        return True

    def end_episode(self):
        if self.frames:
            path = os.path.join(self.video_dir, f"{self.name}_episode_{len(self.paths) + 1}.mp4")
            write_mp4(path, self.frames, fps=self.fps)
            self.paths.append(path)
            self.frames = []
