"""Startup: the window is usable at once, while the default model loads, then the model is ready."""
import time
import unittest

from harness import AppTestCase, default_model_manifest


class Startup(AppTestCase):
    # Without Confab's CPU kernel the default (Q4_1) model is widened to float32 at load, which
    # takes long enough on these machines to see the loading state; with it, loading is often
    # over before the first look. This also runs the app once on MLX's own matmuls.
    app_env = {"CONFAB_CPU_KERNELS": "0"}

    def test_interactive_while_the_model_loads_then_ready(self):
        app = self.app
        # Straight after launch: poll what the window shows until the model is ready.
        states, progress_seen, typed_while_loading = [], False, False
        fractions, stages, said_no_model = set(), set(), False
        sidebar = app.wait_for("sidebar", 30)
        self.assertTrue(sidebar.is_displayed())
        end = time.monotonic() + 300
        while time.monotonic() < end:
            # One look at the page per poll (elements come and go as it loads). The first look
            # also starts a sampler in the page, so the bar's values are seen even when a
            # WebDriver round trip (typing, clicking) takes longer than the load has left.
            state, bar, fraction, stage, body = app.js(
                "if (!window.__loadFractions) {"
                "  window.__loadFractions = [];"
                "  const sample = () => {"
                "    const p = document.querySelector('[data-testid=\"load-progress\"]');"
                "    if (p && !window.__loadFractions.includes(p.value)) window.__loadFractions.push(p.value);"
                "  };"
                "  sample(); window.__loadSampler = setInterval(sample, 20);"
                "}"
                "const s = document.querySelector('[data-testid=\"model-status\"]');"
                "const b = document.querySelector('[data-testid=\"load-progress\"]');"
                "const t = document.querySelector('[data-testid=\"load-stage\"]');"
                "return [s && s.dataset.state, !!b && b.getClientRects().length > 0, b && b.value,"
                "        t && t.textContent, document.body.textContent]")
            said_no_model |= "No model loaded" in (body or "") or "Choose a model" in (body or "")
            if not states or states[-1] != state:
                states.append(state)
            if state == "loading":
                progress_seen |= bar
                fractions.add(fraction)
                stages.add(stage)
                if not typed_while_loading:
                    # The sidebar and the composer work meanwhile.
                    app.fill(app.wait_for("composer-input"), "typed while loading")
                    self.assertEqual(app.wait_for("composer-input").get_attribute("value"), "typed while loading")
                    app.click("new-chat")
                    typed_while_loading = True
            if state in ("ready", "error"):
                break
            time.sleep(0.1)
        self.assertEqual(states[-1], "ready", f"model-status went {states}; {app.text(app.one('model-status'))}")
        fractions.update(app.js("clearInterval(window.__loadSampler); return window.__loadFractions") or [])
        name = default_model_manifest()["name"]
        self.assertIn("SmolLM2", app.text(app.one("model-status")) + app.text(app.one("model-picker")),
                      f"model-status/model-picker should name {name}")
        app.screenshot("startup-ready")
        # From the first frame the window said what was happening, never that no model was there.
        self.assertFalse(said_no_model, f"'No model loaded' or 'Choose a model' shown while starting; states {states}")
        self.assertNotIn("none", states)
        # A first run: the welcome, whose suggested prompts fill the message box.
        app.wait_for("welcome")
        self.assertIn("Welcome to Confab", app.text(app.one("welcome")))
        suggestion = app.all("suggested-prompt")[0]
        prompt = app.text(suggestion)
        suggestion.click()
        app.wait_until(lambda: app.one("composer-input").get_attribute("value") == prompt, 10,
                       "a suggested prompt did not fill the message box")
        if "loading" not in states:
            self.skipTest(f"the model was ready before the first look ({app.session_at - app.launched_at:.1f}s "
                          f"to the session): could not watch it load; states seen {states}")
        self.assertTrue(progress_seen, "load-progress not shown while model-status was loading")
        self.assertTrue(any(stage and stage.startswith("Loading SmolLM2") for stage in stages), f"load-stage said {stages}")
        self.assertGreater(len(fractions), 1, f"the progress bar did not move: {sorted(f for f in fractions if f is not None)}")
        self.assertTrue(typed_while_loading)


if __name__ == "__main__":
    unittest.main()
